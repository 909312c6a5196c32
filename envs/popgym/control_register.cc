// POPGym's control tasks at POPGym's three difficulties (popgym/envs/__init__.py: ALL_CONTROL and
// the CartPole/Pendulum part of ALL_NOISY). POPGym registers them without a Gymnasium time limit
// but truncates each episode itself at max_episode_length, so recur registers that length as the
// time limit (control_options.h). No reward threshold: the optimum of a full episode is 1.0 for
// the CartPoles, but not every start state reaches it for the Pendulums.
#include <memory>
#include <string>

#include <fmt/format.h>

#include "envs/popgym/control_cartpole.h"
#include "envs/popgym/control_pendulum.h"
#include "envs/popgym/register.h"

namespace recur::envs {
namespace {

EnvSpec cartpole(std::string id, PopgymCartPoleConfig defaults, std::string summary) {
  return {
      id,
      "popgym",
      defaults.max_episode_length,
      std::nullopt,
      std::move(summary),
      [defaults, id](OptionReader& options) -> std::unique_ptr<Env> {
        return std::make_unique<PopgymCartPole>(PopgymCartPoleConfig::read(options, defaults, id));
      }};
}

EnvSpec pendulum(std::string id, PopgymPendulumConfig defaults, std::string summary) {
  return {
      id,
      "popgym",
      defaults.max_episode_length,
      std::nullopt,
      std::move(summary),
      [defaults, id](OptionReader& options) -> std::unique_ptr<Env> {
        return std::make_unique<PopgymPendulum>(PopgymPendulumConfig::read(options, defaults, id));
      }};
}

}  // namespace

void register_popgym_control(Registry& r) {
  constexpr auto kPositions = CartPoleView::kPositions;
  constexpr auto kVelocities = CartPoleView::kVelocities;
  const std::string kLevels[] = {"Easy", "Medium", "Hard"};
  const int kCartPoleLength[] = {200, 400, 600};
  const int kPendulumLength[] = {200, 150, 100};
  const double kSigma[] = {0.1, 0.2, 0.3};
  for (int d = 0; d < 3; ++d) {
    const int steps = kCartPoleLength[d];
    r.add(cartpole("PositionOnlyCartPole" + kLevels[d] + "-v0", {kPositions, false, steps, 0},
                   fmt::format("CartPole seeing only x and theta; {} steps, reward 1/{} per step",
                               steps, steps)));
  }
  for (int d = 0; d < 3; ++d) {
    const int steps = kCartPoleLength[d];
    r.add(cartpole("VelocityOnlyCartPole" + kLevels[d] + "-v0", {kVelocities, false, steps, 0},
                   fmt::format("CartPole seeing only its velocities; {} steps, reward 1/{} per "
                               "step",
                               steps, steps)));
  }
  for (int d = 0; d < 3; ++d) {
    r.add(cartpole("NoisyPositionOnlyCartPole" + kLevels[d] + "-v0",
                   {kPositions, true, 200, kSigma[d]},
                   fmt::format("CartPole seeing x and theta with N(0, {}) noise; 200 steps, reward "
                               "1/200 per step",
                               kSigma[d])));
  }
  for (int d = 0; d < 3; ++d) {
    const int steps = kPendulumLength[d];
    r.add(pendulum("PositionOnlyPendulum" + kLevels[d] + "-v0", {false, steps, 0},
                   fmt::format("Pendulum seeing only cos and sin of its angle; {} steps, reward "
                               "in [-1/{}, 1/{}] per step",
                               steps, steps, steps)));
  }
  for (int d = 0; d < 3; ++d) {
    r.add(pendulum("NoisyPositionOnlyPendulum" + kLevels[d] + "-v0", {true, 200, kSigma[d]},
                   fmt::format("Pendulum seeing cos and sin of its angle with N(0, {}) noise; 200 "
                               "steps, reward in [-1/200, 1/200] per step",
                               kSigma[d])));
  }
}

}  // namespace recur::envs
