// CartPole-v1, ported from Gymnasium 1.x (gymnasium/envs/classic_control/cartpole.py).
// A pole on a cart; push the cart left or right to keep the pole upright.
//   action  Discrete(2): 0 pushes left (-10 N), 1 pushes right (+10 N)
//   obs     Box(4): [x, x_dot, theta, theta_dot], bounds +-[4.8, inf, 0.419, inf]
//   reward  +1 every step, the terminating one included (sutton_barto_reward: 0, and -1 there)
//   ends    terminated when |x| > 2.4 or |theta| > 12 degrees
// State in float64 as Gymnasium keeps it; explicit Euler (positions move with the old velocities).
#pragma once

#include "core/options.h"
#include "envs/classic/array_state_env.h"

namespace recur::envs {

struct CartPoleConfig {
  bool sutton_barto_reward = false;  // Gymnasium's sutton_barto_reward constructor argument
  double reset_low = -0.05;          // every state value starts ~ U(reset_low, reset_high)
  double reset_high = 0.05;

  static CartPoleConfig read(OptionReader& options);
};

class CartPole final : public ArrayStateEnv<4> {
 public:
  explicit CartPole(const CartPoleConfig& config = {});

  // Gymnasium's rgb_array scene: 600x400 at 50 fps; the cart on its track, the pole, the axle.
  RenderInfo render_info() const override;
  void draw(render::Canvas& canvas) const override;

 private:
  void reset_impl(Rng& rng, std::optional<uint64_t> seed) override;
  Outcome step_impl(std::span<const float> action) override;
  void observe(std::span<float> obs) const override;

  CartPoleConfig config_;
  // state_ (from ArrayStateEnv): x [m], x_dot [m/s], theta [rad], theta_dot [rad/s]
};

}  // namespace recur::envs
