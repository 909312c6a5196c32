#include "agent/ppo.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "agent/gae.h"
#include "core/error.h"

namespace recur::agent {

PpoUpdater::PpoUpdater(const AlgoConfig& config, policy::PolicyLearner& learner, uint64_t seed)
    : cfg_(config),
      learner_(learner),
      adam_(learner.parameter_groups(), AdamConfig{0.9f, 0.999f, config.adam_eps}),
      rng_(derive_seed(seed, 0x9e0)) {}

namespace {
// Gathers env columns `envs` of a (T, N, width) buffer into (T, Bm, width).
template <typename V>
void gather(const V& src, int T, int N, int width, const std::vector<int>& envs, V& dst) {
  const auto bm = envs.size();
  dst.resize(static_cast<size_t>(T) * bm * width);
  for (int t = 0; t < T; ++t)
    for (size_t j = 0; j < bm; ++j)
      std::copy_n(src.begin() + (static_cast<size_t>(t) * N + envs[j]) * width, width,
                  dst.begin() + (static_cast<size_t>(t) * bm + j) * width);
}
}  // namespace

UpdateStats PpoUpdater::update(Rollout& r, double progress, int64_t env_steps) {
  const int T = r.T, N = r.N;
  const auto tn = static_cast<size_t>(T) * N;
  compute_gae(T, N, cfg_.gamma, cfg_.gae_lambda, r.rewards, r.values, r.terminated, r.truncated,
              r.bootstrap_values, r.last_values, r.advantages, r.returns);

  UpdateStats stats;
  stats.learning_rate = cfg_.lr_schedule == "linear"
                            ? cfg_.learning_rate * std::max(0.0, 1.0 - progress)
                            : cfg_.learning_rate;
  const double clip_range = cfg_.clip_schedule == "linear"
                                ? cfg_.clip_range * std::max(0.0, 1.0 - progress)
                                : cfg_.clip_range;
  const int per_mb = N / cfg_.num_minibatches;
  std::vector<int> order(static_cast<size_t>(N));
  auto groups = learner_.parameter_groups();
  double kl_sum = 0, clip_sum = 0, pg_sum = 0, vl_sum = 0, ent_sum = 0, gn_sum = 0;
  for (int epoch = 0; epoch < cfg_.epochs; ++epoch) {
    std::iota(order.begin(), order.end(), 0);
    for (int i = N - 1; i > 0; --i)
      std::swap(order[static_cast<size_t>(i)],
                order[rng_.uniform_int(static_cast<uint64_t>(i + 1))]);
    double epoch_kl = 0;
    int epoch_mbs = 0;
    for (int mb = 0; mb < cfg_.num_minibatches; ++mb) {
      const std::vector<int> envs(order.begin() + mb * per_mb, order.begin() + (mb + 1) * per_mb);
      const int B = per_mb;
      const auto m = static_cast<size_t>(T) * B;
      gather(r.obs, T, N, r.obs_dim, envs, obs_);
      gather(r.actions, T, N, r.action_dim, envs, actions_);
      gather(r.episode_start, T, N, 1, envs, starts_);
      gather(r.log_probs, T, N, 1, envs, old_logp_);
      gather(r.values, T, N, 1, envs, old_values_);
      gather(r.advantages, T, N, 1, envs, adv_);
      gather(r.returns, T, N, 1, envs, ret_);
      state0_.resize(static_cast<size_t>(B) * r.state_size);
      for (int j = 0; j < B; ++j)
        std::copy_n(r.initial_state.begin() + static_cast<size_t>(envs[j]) * r.state_size,
                    r.state_size, state0_.begin() + static_cast<size_t>(j) * r.state_size);
      if (cfg_.normalize_advantage && m > 1) {
        double mean = 0, sq = 0;
        for (float a : adv_) mean += a;
        mean /= static_cast<double>(m);
        for (float a : adv_) sq += (a - mean) * (a - mean);
        const double std = std::sqrt(sq / static_cast<double>(m - 1));
        for (float& a : adv_) a = static_cast<float>((a - mean) / (std + 1e-8));
      }
      logp_.resize(m);
      ent_.resize(m);
      values_.resize(m);
      learner_.evaluate(T, B, obs_, actions_, starts_, state0_, logp_, ent_, values_);

      // Loss and its gradient w.r.t. (log_prob, entropy, value), means over the minibatch.
      d_logp_.assign(m, 0.0f);
      d_ent_.assign(m, static_cast<float>(-cfg_.ent_coef / static_cast<double>(m)));
      d_values_.assign(m, 0.0f);
      double pg = 0, vl = 0, ent = 0, kl = 0, clipped = 0;
      const double inv_m = 1.0 / static_cast<double>(m);
      for (size_t i = 0; i < m; ++i) {
        const double log_ratio = double{logp_[i]} - old_logp_[i];
        const double ratio = std::exp(log_ratio);
        const double a = adv_[i];
        const double lo = 1.0 - clip_range, hi = 1.0 + clip_range;
        const double l1 = -a * ratio, l2 = -a * std::clamp(ratio, lo, hi);
        pg += std::max(l1, l2);
        // d max(l1, l2)/d ratio: the unclipped branch, unless the clipped one is larger (then
        // ratio is outside the range and the gradient is 0).
        const double dl_dratio = l1 >= l2 ? -a : 0.0;
        d_logp_[i] = static_cast<float>(dl_dratio * ratio * inv_m);
        clipped += std::abs(ratio - 1.0) > clip_range ? 1 : 0;
        kl += (ratio - 1.0) - log_ratio;
        const double v = values_[i], R = ret_[i];
        if (cfg_.clip_range_vf > 0) {
          const double vc =
              old_values_[i] + std::clamp(v - old_values_[i], -double{cfg_.clip_range_vf},
                                          double{cfg_.clip_range_vf});
          const double e1 = (v - R) * (v - R), e2 = (vc - R) * (vc - R);
          vl += 0.5 * std::max(e1, e2);
          const bool inside = std::abs(v - old_values_[i]) < cfg_.clip_range_vf;
          const double dv = e1 >= e2 ? (v - R) : (inside ? (vc - R) : 0.0);
          d_values_[i] = static_cast<float>(cfg_.vf_coef * dv * inv_m);
        } else {
          vl += 0.5 * (v - R) * (v - R);
          d_values_[i] = static_cast<float>(cfg_.vf_coef * (v - R) * inv_m);
        }
        ent += ent_[i];
      }
      pg *= inv_m, vl *= inv_m, ent *= inv_m, kl *= inv_m, clipped *= inv_m;
      const double loss = pg + cfg_.vf_coef * vl - cfg_.ent_coef * ent;

      learner_.zero_gradients();
      learner_.backward(d_logp_, d_ent_, d_values_);
      const double gnorm = clip_grad_norm(groups, cfg_.max_grad_norm);
      if (!std::isfinite(loss) || !std::isfinite(gnorm)) {
        ++nonfinite_streak_;
        ++stats.skipped;
        spdlog::warn(
            "update at env step {} skipped: non-finite {} (loss {}, grad norm {}); {} in "
            "a row",
            env_steps, std::isfinite(loss) ? "gradient" : "loss", loss, gnorm, nonfinite_streak_);
        RECUR_CHECK(nonfinite_streak_ < cfg_.max_nonfinite_updates,
                    "aborting at env step {}: {} updates in a row had a non-finite loss or "
                    "gradient (last: loss {}, grad norm {}); lower algo.learning_rate or check "
                    "the env's rewards",
                    env_steps, nonfinite_streak_, loss, gnorm);
        continue;
      }
      nonfinite_streak_ = 0;
      adam_.step(groups, static_cast<float>(stats.learning_rate));
      pg_sum += pg, vl_sum += vl, ent_sum += ent, kl_sum += kl, clip_sum += clipped;
      gn_sum += gnorm;
      epoch_kl += kl;
      ++epoch_mbs;
      ++stats.minibatches;
    }
    stats.epochs_run = epoch + 1;
    if (cfg_.target_kl > 0 && epoch_mbs > 0 && epoch_kl / epoch_mbs > 1.5 * cfg_.target_kl) break;
  }
  if (stats.minibatches > 0) {
    const double k = stats.minibatches;
    stats.policy_loss = pg_sum / k, stats.value_loss = vl_sum / k, stats.entropy = ent_sum / k;
    stats.approx_kl = kl_sum / k, stats.clip_fraction = clip_sum / k, stats.grad_norm = gn_sum / k;
  }
  // Explained variance of the rollout's values w.r.t. the returns.
  double rm = 0, dm = 0;
  for (size_t i = 0; i < tn; ++i) rm += r.returns[i], dm += r.returns[i] - r.values[i];
  rm /= static_cast<double>(tn), dm /= static_cast<double>(tn);
  double rv = 0, dv = 0;
  for (size_t i = 0; i < tn; ++i) {
    rv += (r.returns[i] - rm) * (r.returns[i] - rm);
    const double d = r.returns[i] - r.values[i] - dm;
    dv += d * d;
  }
  stats.explained_variance = rv > 0 ? 1.0 - dv / rv : 0.0;
  return stats;
}

}  // namespace recur::agent
