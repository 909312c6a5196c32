// POPGym's Pendulum tasks (popgym 1.0.7: envs/position_only_pendulum.py,
// noisy_position_only_pendulum.py), on recur's Pendulum-v1 physics (envs/classic/pendulum.h,
// owned here and driven step for step: dynamics, cost and reset distribution are Gymnasium's, bit
// for bit).
//   PositionOnlyPendulum       obs Box(-1, 1, (2,)): [cos theta, sin theta] (float32)
//   NoisyPositionOnlyPendulum  the same plus N(0, noise_sigma) per entry on every observation,
//                              clipped to [-1, 1] (envs/popgym/control_noise.h)
//   action  Box(-2, 2, (1,)): torque [N m], clipped to +-2
//   reward  ((-cost + h) / h) / max_episode_length with h = 16.2736044 / 2 (POPGym's
//           reward_transform; 16.2736044 = pi^2 + 0.1 * 8^2 + 0.001 * 2^2 is the largest cost),
//           so each step pays in [-1/L, 1/L] and upright and still pays 1/L. Float64 throughout.
//   ends    never terminates; truncated at max_episode_length steps (POPGym sets truncated there;
//           recur's time limit max_episode_steps is that length, see control_options.h).
// Options: max_episode_steps (= POPGym's max_episode_length; max_episode_length is accepted when
// equal), and for the noisy task noise_sigma.
// Difficulties as POPGym: PositionOnly Easy 200, Medium 150, Hard 100 steps; Noisy noise_sigma
// Easy 0.1, Medium 0.2, Hard 0.3, all 200 steps.
//
// Against recur's PendulumNoVel-v1 (envs/wrappers/mask_velocity.h): the same physics, reset, no
// termination and (for Easy) the same 200-step limit, but NoVel keeps 3 entries with theta_dot
// zeroed ([cos, sin, 0], bounds +-[1, 1, 8]) and pays -cost. PositionOnlyPendulum is NoVel with
// the zero dropped and the reward mapped affinely as above (and 150/100 steps at Medium/Hard).
//
// State (get_state/set_state): [theta, theta_dot] (Pendulum's float64 state), then for the noisy
// task the noise of the current observation and of the next one (2 + 2 float32 values; recur
// draws it a step ahead so that a state replays exactly).
#pragma once

#include <memory>
#include <string_view>

#include "core/options.h"
#include "envs/classic/pendulum.h"
#include "envs/env.h"
#include "envs/popgym/control_noise.h"

namespace recur::envs {

struct PopgymPendulumConfig {
  bool noisy = false;            // NoisyPositionOnlyPendulum: noise on every observation
  int max_episode_length = 200;  // steps; also the time limit, and the reward is scaled by 1/length
  double noise_sigma = 0.1;      // std of the noise per observation entry; noisy task only

  // Reads the options above (max_episode_steps, noise_sigma) over `defaults`; errors name `id`.
  static PopgymPendulumConfig read(OptionReader& options, PopgymPendulumConfig defaults,
                                   std::string_view id);
};

class PopgymPendulum final : public Env {
 public:
  explicit PopgymPendulum(const PopgymPendulumConfig& config);

  // POPGym's reward for Pendulum's reward (-cost) over an episode of `length` steps.
  static double reward_transform(double pendulum_reward, int length);

  int state_size() const override;
  void get_state(std::span<double> out) const override;

  // The pendulum as Pendulum-v1 draws it.
  RenderInfo render_info() const override { return pendulum_->render_info(); }
  void draw(render::Canvas& canvas) const override { pendulum_->draw(canvas); }

 private:
  PopgymPendulum(const PopgymPendulumConfig& config, std::unique_ptr<Pendulum> pendulum);
  void reset_impl(Rng& rng, std::optional<uint64_t> seed) override;
  Outcome step_impl(std::span<const float> action) override;
  void observe(std::span<float> obs) const override;
  void set_state_impl(std::span<const double> state) override;

  PopgymPendulumConfig config_;
  std::unique_ptr<Pendulum> pendulum_;
  ControlNoise noise_;  // used when config_.noisy
};

}  // namespace recur::envs
