#include "agent/actor_loop.h"

#include <algorithm>
#include <cmath>

#include "agent/env_output_checks.h"
#include "core/error.h"
#include "core/moments.h"

namespace recur::agent {

void RewardNormalizer::update_and_scale(std::span<float> rewards, std::span<const uint8_t> done,
                                        std::span<const uint8_t> transition, size_t first) {
  if (!enabled) return;
  if (first == 0 && running_return.size() < rewards.size())
    running_return.assign(rewards.size(), 0.0);
  RECUR_ASSERT(first + rewards.size() <= running_return.size());
  const std::span<double> running(running_return.data() + first, rewards.size());
  // Reset steps (transition 0) are no transitions: their zero reward is not a sample.
  const bool all = transition.empty();
  const auto counts = [&](size_t i) { return all || transition[i] != 0; };
  size_t samples = rewards.size();
  if (!all)
    samples = static_cast<size_t>(
        std::count_if(transition.begin(), transition.end(), [](uint8_t t) { return t != 0; }));
  if (samples > 0) {
    // The return statistics with this batch (core/moments.h).
    double bmean = 0, bm2 = 0;
    const auto n = static_cast<double>(samples);
    for (size_t i = 0; i < rewards.size(); ++i) {
      if (!counts(i)) continue;
      running[i] = running[i] * gamma + rewards[i];
      bmean += running[i] / n;
    }
    for (size_t i = 0; i < rewards.size(); ++i)
      if (counts(i)) bm2 += (running[i] - bmean) * (running[i] - bmean);
    double m2 = var * count;  // kept as a variance
    merge_moments(count, n, bmean, bm2, mean, m2);
    count += n;
    var = m2 / count;
    if (tracked) tracked->add(n, std::span<const double>(&bmean, 1), {&bm2, 1});
  }
  const double scale = 1.0 / std::sqrt(var + 1e-8);
  for (size_t i = 0; i < rewards.size(); ++i) {
    rewards[i] = static_cast<float>(std::clamp(rewards[i] * scale, -double{clip}, double{clip}));
    if (done[i]) running[i] = 0;
  }
}

ActorLoop::ActorLoop(envs::BatchEnv& venv, policy::PolicyActor& actor, uint64_t seed,
                     bool normalize_obs)
    : venv_(venv), actor_(actor), rng_(derive_seed(seed, 0xac7012)), normalize_obs_(normalize_obs) {
  const auto n = static_cast<size_t>(venv.num_envs());
  RECUR_CHECK(actor.slots() == venv.num_envs(), "the actor has {} slots for {} envs", actor.slots(),
              venv.num_envs());
  if (actor.groups() > 1) {
    groups_venv_ = dynamic_cast<envs::VectorEnv*>(&venv);
    RECUR_CHECK(groups_venv_ != nullptr,
                "env.groups = {} needs recur's own vector env (C++ envs and plugins); {} is "
                "stepped elsewhere (a Python env): set env.groups: 1",
                actor.groups(), venv.id());
  }
  starts_.assign(n, 1);
  const int adim = actor.spec().action_width();
  actions_.assign(n * adim, 0.0f);
  log_probs_.assign(n, 0.0f);
  values_.assign(n, 0.0f);
  boot_obs_.assign(n * venv.obs_dim(), 0.0f);
  boot_values_.assign(n, 0.0f);
  rewards_.assign(n, 0.0f);
  resetting_.assign(n, 0);
  stat_obs_.assign(n * venv.obs_dim(), 0.0f);
}

void ActorLoop::update_obs_statistics(std::span<const float> obs, int begin, int end) {
  const int O = venv_.obs_dim();
  int rows = end - begin;
  if (any_resetting_) {
    // Only the rows whose step is a transition: a reset step's row is the ended episode's final
    // observation, which the policy does not act on.
    rows = 0;
    for (int i = begin; i < end; ++i) {
      if (resetting_[static_cast<size_t>(i)]) continue;
      std::copy_n(obs.begin() + static_cast<ptrdiff_t>(i - begin) * O, O,
                  stat_obs_.begin() + static_cast<ptrdiff_t>(rows) * O);
      ++rows;
    }
    if (rows == 0) return;
    obs = std::span<const float>(stat_obs_.data(), static_cast<size_t>(rows) * O);
  }
  actor_.normalizer().update(rows, obs);
  if (tracking_) obs_delta_.add(rows, obs);
}

void ActorLoop::act_group(int g, int t, Rollout& r) {
  const int N = venv_.num_envs(), O = venv_.obs_dim();
  const int A = static_cast<int>(actions_.size()) / N;
  const int b = begin_of(g), e = begin_of(g + 1);
  const auto n = static_cast<size_t>(e - b), ub = static_cast<size_t>(b);
  const auto at = static_cast<size_t>(t) * N + ub;  // the group's first element of step t
  if (r.state_every > 0 && t % r.state_every == 0) {
    const auto S = static_cast<size_t>(actor_.spec().state_size());
    const auto chunk = static_cast<size_t>(t / r.state_every) * N * S;
    actor_.group(g).get_states(std::span<float>(r.chunk_states.data() + chunk + ub * S, n * S));
  }
  const auto obs = venv_.obs().subspan(ub * O, n * O);
  if (t == 0) check_env_obs(venv_, env_steps_, b, e);  // later steps were checked after stepping
  if (normalize_obs_) update_obs_statistics(obs, b, e);
  const std::span<float> actions(actions_.data() + ub * A, n * A);
  const std::span<uint8_t> starts(starts_.data() + ub, n);
  actor_.act_group(g, obs, starts, rng_, false, actions, {log_probs_.data() + ub, n},
                   {values_.data() + ub, n});
  const auto nobs = actor_.normalized_obs().subspan(ub * O, n * O);
  std::copy(nobs.begin(), nobs.end(), r.obs.begin() + static_cast<ptrdiff_t>(at * O));
  std::copy(actions.begin(), actions.end(), r.actions.begin() + static_cast<ptrdiff_t>(at * A));
  std::copy_n(log_probs_.begin() + b, n, r.log_probs.begin() + static_cast<ptrdiff_t>(at));
  std::copy_n(values_.begin() + b, n, r.values.begin() + static_cast<ptrdiff_t>(at));
  std::copy(starts.begin(), starts.end(), r.episode_start.begin() + static_cast<ptrdiff_t>(at));
}

void ActorLoop::start_step(int g) {
  if (!groups_venv_) return venv_.step(actions_);
  groups_venv_->start_step_range(begin_of(g), begin_of(g + 1), actions_);
}

void ActorLoop::after_step(int g, int t, Rollout& r,
                           const std::function<void(const EpisodeEnd&)>& on_episode) {
  const int N = venv_.num_envs(), O = venv_.obs_dim();
  const int b = begin_of(g), e = begin_of(g + 1);
  const auto n = static_cast<size_t>(e - b), ub = static_cast<size_t>(b);
  const auto tn = static_cast<size_t>(t) * N;
  env_steps_ += e - b;
  check_env_step(venv_, env_steps_, b, e);
  std::copy_n(venv_.rewards().begin() + b, n, rewards_.begin() + b);
  auto transition = venv_.transition();
  if (!transition.empty()) transition = transition.subspan(ub, n);
  reward_norm_.update_and_scale({rewards_.data() + ub, n}, venv_.episode_start().subspan(ub, n),
                                transition, ub);
  std::copy_n(rewards_.begin() + b, n, r.rewards.begin() + static_cast<ptrdiff_t>(tn + ub));
  if (!transition.empty()) {
    // Reset steps (NEXT_STEP autoreset): no transition, masked out of the update.
    std::copy(transition.begin(), transition.end(),
              r.transition.begin() + static_cast<ptrdiff_t>(tn + ub));
    for (size_t k = 0; k < n; ++k) r.has_reset_steps = r.has_reset_steps || !transition[k];
    // An episode that ended on this step without a new one starting (episode_start 0) spends
    // the next step on its reset (envs/batch_env.h).
    any_resetting_ = false;
    for (int i = b; i < e; ++i) {
      const auto k = static_cast<size_t>(i);
      resetting_[k] = (venv_.terminated()[k] || venv_.truncated()[k]) && !venv_.episode_start()[k];
      any_resetting_ = any_resetting_ || resetting_[k];
    }
  }
  bool any_truncated = false;
  for (int i = b; i < e; ++i) {
    const auto k = static_cast<size_t>(i);
    r.terminated[tn + k] = venv_.terminated()[k];
    r.truncated[tn + k] = venv_.truncated()[k] && !venv_.terminated()[k];
    r.bootstrap_values[tn + k] = 0;
    any_truncated = any_truncated || r.truncated[tn + k];
    if (venv_.episode_start()[k] && on_episode)
      on_episode({i, venv_.final_return()[k], venv_.final_length()[k]});
  }
  const std::span<uint8_t> starts(starts_.data() + ub, n);
  if (any_truncated) {
    // V(final obs) with each env's state after this step (no reset: the episode goes on in
    // the value's eyes); rows of other envs are computed and ignored.
    const auto final_obs = venv_.final_obs().subspan(ub * O, n * O);
    std::copy(final_obs.begin(), final_obs.end(),
              boot_obs_.begin() + static_cast<ptrdiff_t>(ub * O));
    std::fill(starts.begin(), starts.end(), 0);  // reused: all zero for the peek
    actor_.peek_group(g, {boot_obs_.data() + ub * O, n * O}, starts, {boot_values_.data() + ub, n});
    for (int i = b; i < e; ++i)
      if (r.truncated[tn + i]) r.bootstrap_values[tn + i] = boot_values_[static_cast<size_t>(i)];
  }
  std::copy_n(venv_.episode_start().begin() + b, n, starts.begin());
}

void ActorLoop::collect(int T, Rollout& r, const std::function<void(const EpisodeEnd&)>& on_episode,
                        const std::function<bool(int)>& stop_after) {
  const int N = venv_.num_envs(), O = venv_.obs_dim();
  const int A = static_cast<int>(actions_.size()) / N;
  const auto& spec = actor_.spec();
  const int every = r.state_every;
  RECUR_CHECK(every == 0 || T % every == 0,
              "a rollout of {} steps cannot store states every {} steps (algo.bptt_steps must "
              "divide algo.rollout_steps)",
              T, every);
  const auto chunk_size = static_cast<size_t>(N) * spec.state_size();
  if (r.T != T || r.N != N || r.chunk_states.size() != (every > 0 ? T / every : 0) * chunk_size)
    r.resize(T, N, O, A, spec.state_size());
  if (r.has_reset_steps) std::fill(r.transition.begin(), r.transition.end(), 1);
  r.has_reset_steps = false;
  if (reward_norm_.enabled && reward_norm_.running_return.size() != static_cast<size_t>(N))
    reward_norm_.running_return.assign(static_cast<size_t>(N), 0.0);
  if (!started_) {
    // The first unroll of a run starts from reset envs and zero states (episode_start = 1).
    std::fill(starts_.begin(), starts_.end(), 1);
    started_ = true;
  }
  actor_.get_states(r.initial_state);
  if (!groups_venv_) {
    for (int t = 0; t < T; ++t) {
      act_group(0, t, r);
      start_step(0);  // the whole step
      after_step(0, t, r, on_episode);
      if (stop_after && t + 1 < T && stop_after(t + 1)) {
        r.truncate(t + 1);
        break;
      }
    }
  } else {
    // Two groups, A = 0 and B = 1 (the config allows no more): while one group's envs step on
    // the worker threads, this thread acts on the other and takes in the other's last step (its
    // checks, rewards, episode ends and truncation bootstraps: a bootstrap is a policy call of
    // its own, which used to keep both groups' envs waiting). Every call on a group's rows comes
    // in the order of one group's loop, and the groups' in the order they had, so the rollout is
    // the same to the bit. The pool steps one range at a time: a group starts once the other's
    // step is finished.
    RECUR_CHECK(!stop_after, "env.groups > 1 cannot stop a rollout early (dist.sync_frac)");
    try {
      act_group(0, 0, r);
      start_step(0);
      for (int t = 0; t < T; ++t) {
        act_group(1, t, r);
        groups_venv_->finish_step();  // A(t) stepped
        start_step(1);
        after_step(0, t, r, on_episode);
        if (t + 1 < T) act_group(0, t + 1, r);
        groups_venv_->finish_step();  // B(t) stepped
        if (t + 1 < T) start_step(0);
        after_step(1, t, r, on_episode);
      }
    } catch (...) {
      // An error while one group steps in the background (a non-finite observation of the
      // other, say): let that step end before the error leaves, so that nothing runs on.
      try {
        groups_venv_->finish_step();
      } catch (...) {  // the first error is the one to report
      }
      throw;
    }
  }
  // Value after the last step, as the next unroll's first step will see it.
  actor_.peek_values(venv_.obs(), starts_, r.last_values);
}

}  // namespace recur::agent
