#include "envs/popgym/control_cartpole.h"

#include <cmath>
#include <limits>

#include "core/error.h"
#include "envs/popgym/control_options.h"

namespace recur::envs {
namespace {
constexpr int kCartState = 4;  // x, x_dot, theta, theta_dot
constexpr float kInf = std::numeric_limits<float>::infinity();

// POPGym's bounds: twice CartPole's thresholds for positions (CartPole's own obs bounds on x and
// theta), unbounded for velocities.
Space make_observation_space(const CartPole& cart, CartPoleView view) {
  if (view == CartPoleView::kVelocities) return Space::box({-kInf, -kInf}, {kInf, kInf});
  const auto& low = cart.observation_space().low();
  const auto& high = cart.observation_space().high();
  return Space::box({low[0], low[2]}, {high[0], high[2]});
}
}  // namespace

PopgymCartPoleConfig PopgymCartPoleConfig::read(OptionReader& options,
                                                PopgymCartPoleConfig defaults,
                                                std::string_view id) {
  PopgymCartPoleConfig c = defaults;
  c.max_episode_length = read_max_episode_length(options, c.max_episode_length, id);
  if (c.noisy) c.noise_sigma = read_noise_sigma(options, c.noise_sigma, id);
  return c;
}

PopgymCartPole::PopgymCartPole(const PopgymCartPoleConfig& config)
    : PopgymCartPole(config, std::make_unique<CartPole>()) {}

PopgymCartPole::PopgymCartPole(const PopgymCartPoleConfig& config, std::unique_ptr<CartPole> cart)
    : Env(make_observation_space(*cart, config.view), cart->action_space()),
      config_(config),
      cart_(std::move(cart)),
      noise_(config.noise_sigma) {
  RECUR_CHECK_ARG(config.max_episode_length >= 1, "PopgymCartPole: max_episode_length = {} < 1",
                  config.max_episode_length);
  RECUR_CHECK_ARG(!config.noisy || config.view == CartPoleView::kPositions,
                  "PopgymCartPole: POPGym's noisy task observes positions only");
}

int PopgymCartPole::state_size() const {
  return kCartState + (config_.view == CartPoleView::kVelocities ? 1 : 0) +
         (config_.noisy ? ControlNoise::kStateSize : 0);
}

void PopgymCartPole::reset_impl(Rng& rng, std::optional<uint64_t> seed) {
  forward_reset(*cart_, rng, seed);
  reset_obs_ = true;
  if (config_.noisy) noise_.reset(rng);
}

Env::Outcome PopgymCartPole::step_impl(std::span<const float> action) {
  Outcome out = forward_step(*cart_, action);
  // POPGym's reward_transform: CartPole's 0 (only after termination) -> -1, its +1 -> 1/L.
  out.reward = out.reward == 0.0 ? -1.0 : 1.0 / config_.max_episode_length;
  reset_obs_ = false;
  if (config_.noisy) noise_.advance(rng());
  return out;
}

void PopgymCartPole::observe(std::span<float> obs) const {
  float full[kCartState];  // CartPole's float32 observation [x, x_dot, theta, theta_dot]
  forward_observe(*cart_, full);
  const bool positions = config_.view == CartPoleView::kPositions || reset_obs_;
  obs[0] = full[positions ? 0 : 1];
  obs[1] = full[positions ? 2 : 3];
  if (config_.noisy) noise_.apply(obs, observation_space().low(), observation_space().high());
}

void PopgymCartPole::get_state(std::span<double> out) const {
  cart_->get_state(out.first(kCartState));
  size_t at = kCartState;
  if (config_.view == CartPoleView::kVelocities) out[at++] = reset_obs_ ? 1.0 : 0.0;
  if (config_.noisy) noise_.get_state(out.subspan(at));
}

void PopgymCartPole::set_state_impl(std::span<const double> state) {
  // Everything is checked before anything changes.
  for (size_t i = 0; i < kCartState; ++i)
    RECUR_CHECK_ARG(std::isfinite(state[i]), "{}: state[{}] = {} is not finite", id(), i, state[i]);
  size_t at = kCartState;
  bool reset_obs = false;
  if (config_.view == CartPoleView::kVelocities) {
    RECUR_CHECK_ARG(state[at] == 0.0 || state[at] == 1.0,
                    "{}: state[{}] = {} must be 1 (reset observation) or 0", id(), at, state[at]);
    reset_obs = state[at++] == 1.0;
  }
  if (config_.noisy) noise_.set_state(state.subspan(at), id().c_str());
  reset_obs_ = reset_obs;
  forward_set_state(*cart_, state.first(kCartState));
}

}  // namespace recur::envs
