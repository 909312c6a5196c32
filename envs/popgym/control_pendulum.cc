#include "envs/popgym/control_pendulum.h"

#include <cmath>

#include "core/error.h"
#include "envs/popgym/control_options.h"

namespace recur::envs {
namespace {
constexpr int kPendulumState = 2;  // theta, theta_dot
// POPGym's reward range of Pendulum: low = -16.2736044, high = 0; (high - low) / 2 is exact.
constexpr double kLow = -16.2736044;
constexpr double kHigh = 0;
constexpr double kHalfRange = (kHigh - kLow) / 2;
}  // namespace

PopgymPendulumConfig PopgymPendulumConfig::read(OptionReader& options,
                                                PopgymPendulumConfig defaults,
                                                std::string_view id) {
  PopgymPendulumConfig c = defaults;
  c.max_episode_length = read_max_episode_length(options, c.max_episode_length, id);
  if (c.noisy) c.noise_sigma = read_noise_sigma(options, c.noise_sigma, id);
  return c;
}

PopgymPendulum::PopgymPendulum(const PopgymPendulumConfig& config)
    : PopgymPendulum(config, std::make_unique<Pendulum>()) {}

PopgymPendulum::PopgymPendulum(const PopgymPendulumConfig& config,
                               std::unique_ptr<Pendulum> pendulum)
    : Env(Space::box(-1.0f, 1.0f, {2}), pendulum->action_space()),
      config_(config),
      pendulum_(std::move(pendulum)),
      noise_(config.noise_sigma) {
  RECUR_CHECK_ARG(config.max_episode_length >= 1, "PopgymPendulum: max_episode_length = {} < 1",
                  config.max_episode_length);
}

double PopgymPendulum::reward_transform(double pendulum_reward, int length) {
  // POPGym's order of operations: shift, scale, then divide by the length.
  const double shifted = pendulum_reward + kHalfRange;
  const double scaled = shifted / kHalfRange;
  return scaled / length;
}

int PopgymPendulum::state_size() const {
  return kPendulumState + (config_.noisy ? ControlNoise::kStateSize : 0);
}

void PopgymPendulum::reset_impl(Rng& rng, std::optional<uint64_t> seed) {
  forward_reset(*pendulum_, rng, seed);
  if (config_.noisy) noise_.reset(rng);
}

Env::Outcome PopgymPendulum::step_impl(std::span<const float> action) {
  Outcome out = forward_step(*pendulum_, action);
  out.reward = reward_transform(out.reward, config_.max_episode_length);
  if (config_.noisy) noise_.advance(rng());
  return out;
}

void PopgymPendulum::observe(std::span<float> obs) const {
  float full[3];  // Pendulum's float32 observation [cos theta, sin theta, theta_dot]
  forward_observe(*pendulum_, full);
  obs[0] = full[0];
  obs[1] = full[1];
  if (config_.noisy) noise_.apply(obs, observation_space().low(), observation_space().high());
}

void PopgymPendulum::get_state(std::span<double> out) const {
  pendulum_->get_state(out.first(kPendulumState));
  if (config_.noisy) noise_.get_state(out.subspan(kPendulumState));
}

void PopgymPendulum::set_state_impl(std::span<const double> state) {
  // Everything is checked before anything changes.
  for (size_t i = 0; i < kPendulumState; ++i)
    RECUR_CHECK_ARG(std::isfinite(state[i]), "{}: state[{}] = {} is not finite", id(), i, state[i]);
  if (config_.noisy) noise_.set_state(state.subspan(kPendulumState), id().c_str());
  forward_set_state(*pendulum_, state.first(kPendulumState));
}

}  // namespace recur::envs
