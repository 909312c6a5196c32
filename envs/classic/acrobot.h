// Acrobot-v1, ported from Gymnasium 1.x (gymnasium/envs/classic_control/acrobot.py).
// Two links hang from a fixed joint; torque on the middle joint must swing the tip above a line.
//   action  Discrete(3): torque -1, 0, +1 on the joint between the links
//   obs     Box(6): [cos t1, sin t1, cos t2, sin t2, t1_dot, t2_dot], bounds +-[1,1,1,1,4 pi,9 pi]
//   reward  -1 every step that does not terminate, 0 on the terminating step
//   ends    terminated when -cos(t1) - cos(t1 + t2) > 1
// Dynamics: the "book" variant, ONE classic RK4 step over dt = 0.2 s, then angles wrapped to
// [-pi, pi] and velocities clipped, exactly as Gymnasium.
#pragma once

#include "core/options.h"
#include "envs/classic/array_state_env.h"

namespace recur::envs {

struct AcrobotConfig {
  double reset_low = -0.1;  // all four state values start ~ U(reset_low, reset_high)
  double reset_high = 0.1;

  static AcrobotConfig read(OptionReader& options);
};

class Acrobot final : public ArrayStateEnv<4> {
 public:
  explicit Acrobot(const AcrobotConfig& config = {});

  // Gymnasium's rgb_array scene: 500x500 at 15 fps; both links, their joints and the goal line.
  RenderInfo render_info() const override;
  void draw(render::Canvas& canvas) const override;

 private:
  void reset_impl(Rng& rng, std::optional<uint64_t> seed) override;
  Outcome step_impl(std::span<const float> action) override;
  void observe(std::span<float> obs) const override;

  AcrobotConfig config_;
  // state_ (from ArrayStateEnv): theta1, theta2 [rad], theta1_dot, theta2_dot [rad/s]
};

}  // namespace recur::envs
