#include "agent/actor_loop.h"

#include <algorithm>
#include <cmath>

#include "agent/env_output_checks.h"
#include "core/error.h"
#include "core/moments.h"

namespace recur::agent {

void RewardNormalizer::update_and_scale(std::span<float> rewards, std::span<const uint8_t> done,
                                        std::span<const uint8_t> transition) {
  if (!enabled) return;
  if (running_return.size() != rewards.size()) running_return.assign(rewards.size(), 0.0);
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
      running_return[i] = running_return[i] * gamma + rewards[i];
      bmean += running_return[i] / n;
    }
    for (size_t i = 0; i < rewards.size(); ++i)
      if (counts(i)) bm2 += (running_return[i] - bmean) * (running_return[i] - bmean);
    double m2 = var * count;  // kept as a variance
    merge_moments(count, n, bmean, bm2, mean, m2);
    count += n;
    var = m2 / count;
    if (tracked) tracked->add(n, std::span<const double>(&bmean, 1), {&bm2, 1});
  }
  const double scale = 1.0 / std::sqrt(var + 1e-8);
  for (size_t i = 0; i < rewards.size(); ++i) {
    rewards[i] = static_cast<float>(std::clamp(rewards[i] * scale, -double{clip}, double{clip}));
    if (done[i]) running_return[i] = 0;
  }
}

ActorLoop::ActorLoop(envs::BatchEnv& venv, policy::PolicyActor& actor, uint64_t seed,
                     bool normalize_obs)
    : venv_(venv), actor_(actor), rng_(derive_seed(seed, 0xac7012)), normalize_obs_(normalize_obs) {
  const auto n = static_cast<size_t>(venv.num_envs());
  starts_.assign(n, 1);
  const int adim =
      actor.spec().action_kind == policy::ActionKind::kDiscrete ? 1 : actor.spec().action_dim;
  actions_.assign(n * adim, 0.0f);
  log_probs_.assign(n, 0.0f);
  values_.assign(n, 0.0f);
  boot_obs_.assign(n * venv.obs_dim(), 0.0f);
  boot_values_.assign(n, 0.0f);
  rewards_.assign(n, 0.0f);
  resetting_.assign(n, 0);
  stat_obs_.assign(n * venv.obs_dim(), 0.0f);
}

void ActorLoop::update_obs_statistics(std::span<const float> obs) {
  const int N = venv_.num_envs(), O = venv_.obs_dim();
  int rows = N;
  if (any_resetting_) {
    // Only the rows whose step is a transition: a reset step's row is the ended episode's final
    // observation, which the policy does not act on.
    rows = 0;
    for (int i = 0; i < N; ++i) {
      if (resetting_[static_cast<size_t>(i)]) continue;
      std::copy_n(obs.begin() + static_cast<ptrdiff_t>(i) * O, O,
                  stat_obs_.begin() + static_cast<ptrdiff_t>(rows) * O);
      ++rows;
    }
    if (rows == 0) return;
    obs = std::span<const float>(stat_obs_.data(), static_cast<size_t>(rows) * O);
  }
  actor_.normalizer().update(rows, obs);
  if (tracking_) obs_delta_.add(rows, obs);
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
  if (!started_) {
    // The first unroll of a run starts from reset envs and zero states (episode_start = 1).
    std::fill(starts_.begin(), starts_.end(), 1);
    started_ = true;
  }
  actor_.get_states(r.initial_state);
  for (int t = 0; t < T; ++t) {
    const auto tn = static_cast<size_t>(t) * N;
    if (every > 0 && t % every == 0)
      actor_.get_states(
          std::span<float>(r.chunk_states.data() + (t / every) * chunk_size, chunk_size));
    const auto obs = venv_.obs();
    if (t == 0) check_env_obs(venv_, env_steps_);  // later steps were checked after stepping
    if (normalize_obs_) update_obs_statistics(obs);
    actor_.act(obs, starts_, rng_, false, actions_, log_probs_, values_);
    std::copy(actor_.normalized_obs().begin(), actor_.normalized_obs().end(),
              r.obs.begin() + tn * O);
    std::copy(actions_.begin(), actions_.end(), r.actions.begin() + tn * A);
    std::copy(log_probs_.begin(), log_probs_.end(), r.log_probs.begin() + tn);
    std::copy(values_.begin(), values_.end(), r.values.begin() + tn);
    std::copy(starts_.begin(), starts_.end(), r.episode_start.begin() + tn);

    venv_.step(actions_);
    env_steps_ += N;
    check_env_step(venv_, env_steps_);
    std::copy(venv_.rewards().begin(), venv_.rewards().end(), rewards_.begin());
    const auto transition = venv_.transition();
    reward_norm_.update_and_scale(rewards_, venv_.episode_start(), transition);
    std::copy(rewards_.begin(), rewards_.end(), r.rewards.begin() + tn);
    if (!transition.empty()) {
      // Reset steps (NEXT_STEP autoreset): no transition, masked out of the update.
      std::copy(transition.begin(), transition.end(), r.transition.begin() + tn);
      for (int i = 0; i < N; ++i) r.has_reset_steps = r.has_reset_steps || !transition[i];
      // An episode that ended on this step without a new one starting (episode_start 0) spends
      // the next step on its reset (envs/batch_env.h).
      any_resetting_ = false;
      for (int i = 0; i < N; ++i) {
        const auto k = static_cast<size_t>(i);
        resetting_[k] =
            (venv_.terminated()[k] || venv_.truncated()[k]) && !venv_.episode_start()[k];
        any_resetting_ = any_resetting_ || resetting_[k];
      }
    }
    bool any_truncated = false;
    for (int i = 0; i < N; ++i) {
      r.terminated[tn + i] = venv_.terminated()[i];
      r.truncated[tn + i] = venv_.truncated()[i] && !venv_.terminated()[i];
      r.bootstrap_values[tn + i] = 0;
      any_truncated = any_truncated || r.truncated[tn + i];
      if (venv_.episode_start()[i] && on_episode)
        on_episode({i, venv_.final_return()[i], venv_.final_length()[i]});
    }
    if (any_truncated) {
      // V(final obs) with each env's state after this step (no reset: the episode goes on in
      // the value's eyes); rows of other envs are computed and ignored.
      std::copy(venv_.final_obs().begin(), venv_.final_obs().end(), boot_obs_.begin());
      std::vector<uint8_t>& no_reset = starts_;  // reused: all zero for the peek
      std::fill(no_reset.begin(), no_reset.end(), 0);
      actor_.peek_values(boot_obs_, no_reset, boot_values_);
      for (int i = 0; i < N; ++i)
        if (r.truncated[tn + i]) r.bootstrap_values[tn + i] = boot_values_[static_cast<size_t>(i)];
    }
    std::copy(venv_.episode_start().begin(), venv_.episode_start().end(), starts_.begin());
    if (stop_after && t + 1 < T && stop_after(t + 1)) {
      r.truncate(t + 1);
      break;
    }
  }
  // Value after the last step, as the next unroll's first step will see it.
  actor_.peek_values(venv_.obs(), starts_, r.last_values);
}

}  // namespace recur::agent
