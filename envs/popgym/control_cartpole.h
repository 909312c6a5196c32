// POPGym's CartPole tasks (popgym 1.0.7: envs/position_only_cartpole.py,
// velocity_only_cartpole.py, noisy_position_only_cartpole.py), on recur's CartPole-v1 physics
// (envs/classic/cartpole.h, owned here and driven step for step: dynamics, reset distribution
// U(-0.05, 0.05)^4 and termination are Gymnasium's, bit for bit).
//   PositionOnlyCartPole       obs Box(2): [x, theta], bounds +-[4.8, 0.419] (float32)
//   VelocityOnlyCartPole       obs Box(2): [x_dot, theta_dot], bounds +-inf. As POPGym's reset()
//                              does (it slices [0, 2] there, [1, 3] in step), the reset
//                              observation is [x, theta]: the first one shows positions.
//   NoisyPositionOnlyCartPole  obs as PositionOnlyCartPole plus N(0, noise_sigma) per entry on
//                              every observation, clipped to the bounds
//                              (envs/popgym/control_noise.h)
//   action  Discrete(2): 0 pushes left, 1 pushes right
//   reward  1/max_episode_length on every step, the terminating one included (POPGym maps
//           CartPole's +1 to 1/L, and its 0 after termination, which recur never steps, to -1),
//           so a full episode returns 1.0: the optimum.
//   ends    terminated when |x| > 2.4 or |theta| > 12 degrees; truncated at max_episode_length
//           steps (POPGym sets truncated there; recur's time limit max_episode_steps is that
//           length, see control_options.h). POPGym registers no Gymnasium time limit.
// Options: max_episode_steps (= POPGym's max_episode_length; max_episode_length is accepted when
// equal), and for the noisy task noise_sigma.
// Difficulties as POPGym: Position/VelocityOnly Easy 200, Medium 400, Hard 600 steps; Noisy
// noise_sigma Easy 0.1, Medium 0.2, Hard 0.3, all 200 steps.
// Ids: POPGym registers the velocity task as popgym-VelocityOnlyCartpole<Difficulty>-v0 (lower
// case p); recur uses the class name, VelocityOnlyCartPole<Difficulty>-v0.
//
// Against recur's CartPoleNoVel-v1 (envs/wrappers/mask_velocity.h): the same physics, reset and
// termination, but NoVel keeps 4 entries with the velocities zeroed ([x, 0, theta, 0]), truncates
// at 500 and pays +1 per step. PositionOnlyCartPole is NoVel with the zeros dropped, the limit
// 200/400/600 and the reward divided by it. VelocityOnlyCartPole hides the other pair: no NoVel
// env matches it.
//
// State (get_state/set_state): [x, x_dot, theta, theta_dot] (CartPole's float64 state), then for
// VelocityOnlyCartPole one flag (1 while the observation is the reset one showing positions, else
// 0), then for the noisy task the noise of the current observation and of the next one (2 + 2
// float32 values; recur draws it a step ahead so that a state replays exactly).
#pragma once

#include <memory>
#include <string_view>

#include "core/options.h"
#include "envs/classic/cartpole.h"
#include "envs/env.h"
#include "envs/popgym/control_noise.h"

namespace recur::envs {

enum class CartPoleView {
  kPositions,   // [x, theta]
  kVelocities,  // [x_dot, theta_dot] (the reset observation shows positions, as POPGym's)
};

struct PopgymCartPoleConfig {
  CartPoleView view = CartPoleView::kPositions;
  bool noisy = false;            // NoisyPositionOnlyCartPole: noise on every observation
  int max_episode_length = 200;  // steps; also the time limit, and the reward is 1/length
  double noise_sigma = 0.1;      // std of the noise per observation entry; noisy task only

  // Reads the options above (max_episode_steps, noise_sigma) over `defaults`; errors name `id`.
  static PopgymCartPoleConfig read(OptionReader& options, PopgymCartPoleConfig defaults,
                                   std::string_view id);
};

class PopgymCartPole final : public Env {
 public:
  explicit PopgymCartPole(const PopgymCartPoleConfig& config);

  int state_size() const override;
  void get_state(std::span<double> out) const override;

  // The cart and pole as CartPole-v1 draws them (the picture shows what the agent cannot see).
  RenderInfo render_info() const override { return cart_->render_info(); }
  void draw(render::Canvas& canvas) const override { cart_->draw(canvas); }

 private:
  PopgymCartPole(const PopgymCartPoleConfig& config, std::unique_ptr<CartPole> cart);
  void reset_impl(Rng& rng, std::optional<uint64_t> seed) override;
  Outcome step_impl(std::span<const float> action) override;
  void observe(std::span<float> obs) const override;
  void set_state_impl(std::span<const double> state) override;

  PopgymCartPoleConfig config_;
  std::unique_ptr<CartPole> cart_;
  bool reset_obs_ = false;  // the observation is the reset one (matters for kVelocities only)
  ControlNoise noise_;      // used when config_.noisy
};

}  // namespace recur::envs
