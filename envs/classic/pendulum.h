// Pendulum-v1, ported from Gymnasium 1.x (gymnasium/envs/classic_control/pendulum.py).
// Swing a pendulum up and hold it upright with a bounded torque.
//   action  Box(-2, 2, (1,)): torque [N m], clipped to +-2
//   obs     Box(3): [cos theta, sin theta, theta_dot], bounds +-[1, 1, 8]
//   reward  -(angle_normalize(theta)^2 + 0.1 theta_dot^2 + 0.001 u^2), from the state BEFORE the
//   step ends    never terminates; truncated at 200 steps by the registry's time limit
#pragma once

#include <array>
#include <numbers>
#include <optional>

#include "core/options.h"
#include "envs/classic/array_state_env.h"

namespace recur::envs {

struct PendulumConfig {
  double g = 10.0;                   // gravity [m/s^2], Gymnasium's g constructor argument
  double x_init = std::numbers::pi;  // theta starts ~ U(-x_init, x_init) [rad]
  double y_init = 1.0;               // theta_dot starts ~ U(-y_init, y_init) [rad/s]

  static PendulumConfig read(OptionReader& options);
};

class Pendulum final : public ArrayStateEnv<2> {
 public:
  explicit Pendulum(const PendulumConfig& config = {});

  // Gymnasium's rgb_array scene: 500x500 at 30 fps; the rod and, after a step, an arrow for the
  // last torque (clockwise for u < 0, counter-clockwise for u > 0, its size proportional to |u|).
  RenderInfo render_info() const override;
  void draw(render::Canvas& canvas) const override;

 private:
  void reset_impl(Rng& rng, std::optional<uint64_t> seed) override;
  Outcome step_impl(std::span<const float> action) override;
  void observe(std::span<float> obs) const override;

  PendulumConfig config_;
  // state_ (from ArrayStateEnv): theta [rad], theta_dot [rad/s]
  // The clipped torque of the last step, for the picture only (Gymnasium's last_u; none after
  // reset). Not part of the state: set_state leaves it, as assigning Gymnasium's state does.
  std::optional<float> last_u_;
};

}  // namespace recur::envs
