#include "envs/env.h"

#include <cmath>
#include <random>
#include <stdexcept>

#include "core/error.h"

namespace recur::envs {
namespace {

// An exception from an env's own code (a plugin's or a program's env, or a bug in a built-in one)
// becomes a recur::Error that names the env and where in the episode it happened. recur's own
// invariant and device errors keep their type (and their exit code).
[[noreturn]] void rethrow_env_failure(const std::string& id, const char* phase, int step) {
  try {
    throw;
  } catch (const InternalError&) {
    throw;
  } catch (const DeviceError&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(step > 0 ? fmt::format("env {} threw in {} at step {} of its episode: {}", id,
                                       phase, step, e.what())
                         : fmt::format("env {} threw in {}: {}", id, phase, e.what()));
  } catch (...) {
    throw Error(fmt::format("env {} threw in {} at step {} of its episode (not a std::exception)",
                            id, phase, step));
  }
}

}  // namespace

Env::Env(Space observation_space, Space action_space)
    : observation_space_(std::move(observation_space)),
      action_space_(std::move(action_space)),
      obs_(static_cast<size_t>(observation_space_.flat_size()), 0.0f) {}

void Env::set_max_episode_steps(int steps) {
  RECUR_CHECK_ARG(steps >= 0, "{}: max_episode_steps must be >= 0 (0 = no limit), got {}", id_,
                  steps);
  max_episode_steps_ = steps;
}

std::span<const float> Env::reset(uint64_t seed) {
  rng_.reseed(seed);
  seeded_ = true;
  return start_episode(seed);
}

std::span<const float> Env::reset() {
  if (!seeded_) {
    std::random_device entropy;
    rng_.reseed((uint64_t{entropy()} << 32) | entropy());
    seeded_ = true;
  }
  return start_episode(std::nullopt);
}

void Env::reset_impl(Rng& rng, std::optional<uint64_t> /*seed*/) {
  reset_impl(rng);
}

void Env::reset_impl(Rng&) {
  throw std::logic_error(id_ + ": the env overrides neither reset_impl(Rng&, seed) nor " +
                         "reset_impl(Rng&)");
}

std::span<const float> Env::start_episode(std::optional<uint64_t> seed) {
  try {
    reset_impl(rng_, seed);
    observe(obs_);
  } catch (...) {
    rethrow_env_failure(id_, "reset()", 0);
  }
  has_reset_ = true;
  needs_reset_ = false;
  elapsed_steps_ = 0;
  episode_return_ = 0;
  return obs_;
}

void Env::validate_action(std::span<const float> action) const {
  RECUR_CHECK_ARG(action.size() == static_cast<size_t>(action_space_.flat_size()),
                  "{}: action has {} values; {} takes {}", id_, action.size(),
                  action_space_.to_string(), action_space_.flat_size());
  if (action_space_.is_discrete()) {
    RECUR_CHECK_ARG(action_space_.contains(action),
                    "{}: action {} is not in {} (expected an integer in [0, {}))", id_, action[0],
                    action_space_.to_string(), action_space_.n());
    return;
  }
  for (size_t i = 0; i < action.size(); ++i)
    RECUR_CHECK_ARG(std::isfinite(action[i]), "{}: action[{}] = {} is not a finite number ({})",
                    id_, i, action[i], action_space_.to_string());
}

StepResult Env::step(std::span<const float> action) {
  validate_action(action);
  return advance(action);
}

StepResult Env::advance(std::span<const float> action) {
  if (!has_reset_ || needs_reset_) [[unlikely]] {
    throw std::logic_error(has_reset_
                               ? id_ + ": step() called after the episode ended; call reset() first"
                               : id_ + ": step() called before reset(); call reset(seed) first");
  }
  Outcome out;
  try {
    out = step_impl(action);
    observe(obs_);
  } catch (...) {
    rethrow_env_failure(id_, "step()", elapsed_steps_ + 1);
  }
  ++elapsed_steps_;
  episode_return_ += out.reward;
  StepResult r;
  r.obs = obs_;
  r.reward = out.reward;
  r.terminated = out.terminated;
  r.truncated = max_episode_steps_ > 0 && elapsed_steps_ >= max_episode_steps_;
  needs_reset_ = r.done();
  return r;
}

void Env::get_state(std::span<double>) const {
  throw std::logic_error(id_ + " does not expose its physical state");
}

void Env::set_state(std::span<const double> state) {
  RECUR_CHECK_ARG(state_size() > 0, "{} does not expose its physical state", id_);
  RECUR_CHECK_ARG(state.size() == static_cast<size_t>(state_size()),
                  "{}: set_state got {} values, the state has {}", id_, state.size(), state_size());
  set_state_impl(state);
  observe(obs_);
}

Env::Snapshot Env::snapshot() const {
  Snapshot s;
  s.state.resize(static_cast<size_t>(state_size()));
  if (!s.state.empty() && has_reset_) get_state(s.state);
  s.rng = rng_.state();
  s.seeded = seeded_;
  s.has_reset = has_reset_;
  s.needs_reset = needs_reset_;
  s.elapsed_steps = elapsed_steps_;
  s.episode_return = episode_return_;
  return s;
}

bool Env::restore(const Snapshot& s) {
  RECUR_CHECK_ARG(s.state.size() == static_cast<size_t>(state_size()),
                  "{}: snapshot holds {} state values, the env has {}", id_, s.state.size(),
                  state_size());
  if (s.has_reset && !s.state.empty()) set_state(s.state);
  rng_.set_state(s.rng);
  seeded_ = s.seeded;
  has_reset_ = s.has_reset;
  needs_reset_ = s.needs_reset;
  elapsed_steps_ = s.elapsed_steps;
  episode_return_ = s.episode_return;
  if (state_size() > 0 || !has_reset_ || needs_reset_) return false;
  // No physical state to put back: start a new episode from the restored RNG.
  reset_impl(rng_, std::nullopt);
  observe(obs_);
  elapsed_steps_ = 0;
  episode_return_ = 0;
  return true;
}

void Env::draw(render::Canvas&) const {
  throw Error(id_ + " cannot render: it has no draw() (render_info().fps is 0)");
}

void Env::set_state_impl(std::span<const double>) {
  throw std::logic_error(id_ + " does not expose its physical state");
}

}  // namespace recur::envs
