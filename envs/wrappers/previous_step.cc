#include "envs/wrappers/previous_step.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"

namespace recur::envs {
namespace {

// The wrapped observation space: the inner bounds, then the appended values' bounds.
Space appended_space(const Env& inner, bool prev_action, bool prev_reward) {
  const Space& obs = inner.observation_space();
  RECUR_CHECK(!obs.is_discrete(),
              "env {}: prev_action/prev_reward need a Box observation (recur's envs all have one)",
              inner.id());
  std::vector<float> low = obs.low(), high = obs.high();
  const Space& act = inner.action_space();
  if (prev_action) {
    if (act.is_discrete()) {
      low.insert(low.end(), static_cast<size_t>(act.n()), 0.0f);
      high.insert(high.end(), static_cast<size_t>(act.n()), 1.0f);
    } else {
      low.insert(low.end(), act.low().begin(), act.low().end());
      high.insert(high.end(), act.high().begin(), act.high().end());
    }
  }
  if (prev_reward) {
    low.push_back(-std::numeric_limits<float>::infinity());
    high.push_back(std::numeric_limits<float>::infinity());
  }
  low.push_back(0.0f);  // the first-observation flag
  high.push_back(1.0f);
  return Space::box(std::move(low), std::move(high));
}

}  // namespace

PreviousStep::PreviousStep(std::unique_ptr<Env> inner, bool prev_action, bool prev_reward)
    : Env(appended_space(*inner, prev_action, prev_reward), inner->action_space()),
      inner_(std::move(inner)),
      prev_reward_(prev_reward),
      inner_obs_(inner_->obs_dim()),
      action_size_(!prev_action ? 0
                   : inner_->action_space().is_discrete()
                       ? static_cast<int>(inner_->action_space().n())
                       : inner_->action_dim()) {
  appended_.assign(static_cast<size_t>(appended_size()), 0.0f);
}

void PreviousStep::reset_impl(Rng& rng, std::optional<uint64_t> seed) {
  forward_reset(*inner_, rng, seed);
  std::fill(appended_.begin(), appended_.end(), 0.0f);
  appended_.back() = 1.0f;
}

Env::Outcome PreviousStep::step_impl(std::span<const float> action) {
  const Outcome out = forward_step(*inner_, action);
  std::fill(appended_.begin(), appended_.end(), 0.0f);
  const Space& act = action_space();
  if (action_size_ > 0 && act.is_discrete()) {
    appended_[static_cast<size_t>(action[0])] = 1.0f;
  } else if (action_size_ > 0) {
    for (int i = 0; i < action_size_; ++i) {
      const auto u = static_cast<size_t>(i);
      appended_[u] = std::clamp(action[u], act.low()[u], act.high()[u]);
    }
  }
  if (prev_reward_) appended_[static_cast<size_t>(action_size_)] = static_cast<float>(out.reward);
  return out;
}

void PreviousStep::observe(std::span<float> obs) const {
  forward_observe(*inner_, obs.first(static_cast<size_t>(inner_obs_)));
  std::copy(appended_.begin(), appended_.end(), obs.begin() + inner_obs_);
}

int PreviousStep::state_size() const {
  const int inner = inner_->state_size();
  return inner == 0 ? 0 : inner + appended_size();
}

void PreviousStep::get_state(std::span<double> out) const {
  const auto inner = static_cast<size_t>(inner_->state_size());
  inner_->get_state(out.first(inner));
  std::copy(appended_.begin(), appended_.end(), out.begin() + static_cast<ptrdiff_t>(inner));
}

void PreviousStep::set_state_impl(std::span<const double> state) {
  const auto inner = static_cast<size_t>(inner_->state_size());
  const std::span<const double> tail = state.subspan(inner);
  // Check before changing anything: a rejected state leaves the env as it was.
  for (size_t i = 0; i < tail.size(); ++i)
    RECUR_CHECK_ARG(std::isfinite(tail[i]), "{}: state[{}] = {} is not finite", id(), inner + i,
                    tail[i]);
  RECUR_CHECK_ARG(tail.back() == 0 || tail.back() == 1,
                  "{}: state[{}] = {} is the first-observation flag; use 0 or 1", id(),
                  state.size() - 1, tail.back());
  forward_set_state(*inner_, state.first(inner));
  for (size_t i = 0; i < tail.size(); ++i) appended_[i] = static_cast<float>(tail[i]);
}

std::unique_ptr<Env> with_previous_step(std::unique_ptr<Env> env, bool prev_action,
                                        bool prev_reward) {
  if (!prev_action && !prev_reward) return env;
  return std::make_unique<PreviousStep>(std::move(env), prev_action, prev_reward);
}

}  // namespace recur::envs
