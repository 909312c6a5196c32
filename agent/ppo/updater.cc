#include "agent/ppo/updater.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <numeric>

#include "agent/dist/communicator.h"
#include "agent/ppo/bptt.h"
#include "agent/ppo/gae.h"
#include "core/error.h"
#include "core/finite.h"
#include "policy/gpu_executors.h"

namespace recur::agent {
namespace {

// Which of a minibatch's numbers went non-finite first: the loss term, else the gradient.
std::string describe_nonfinite(const MinibatchResult& r) {
  const auto terms = fmt::format("policy loss {}, value loss {}, entropy {}, gradient norm {}",
                                 r.policy_loss, r.value_loss, r.entropy, r.grad_norm);
  if (!std::isfinite(r.value_loss)) return "the value loss is non-finite (" + terms + ")";
  if (!std::isfinite(r.policy_loss)) return "the policy loss is non-finite (" + terms + ")";
  if (!std::isfinite(r.entropy)) return "the entropy is non-finite (" + terms + ")";
  if (!std::isfinite(r.loss)) return fmt::format("the loss is non-finite ({}, {})", r.loss, terms);
  return "the gradient norm is non-finite (" + terms + ")";
}

}  // namespace

PpoUpdater::PpoUpdater(const AlgoConfig& config, std::unique_ptr<PpoEngine> engine, uint64_t seed,
                       dist::Communicator* comm)
    : cfg_(config), engine_(std::move(engine)), rng_(derive_seed(seed, 0x9e0)), comm_(comm) {
  if (engine_->scales_gradients()) {
    loss_scale_.emplace(policy::kFp16GradientScale);
    engine_->set_gradient_scale(loss_scale_->value());
  }
}

PpoUpdater::PpoUpdater(const AlgoConfig& config, policy::PolicyLearner& learner, uint64_t seed)
    : PpoUpdater(config, make_host_ppo_engine(learner, config.adam_eps), seed) {}

UpdateStats PpoUpdater::update(Rollout& rollout, double progress, int64_t env_steps,
                               int policy_lag) {
  // Reset steps (NEXT_STEP autoreset envs) are masked; the CUDA engine has no mask.
  RECUR_CHECK(!rollout.has_reset_steps || engine_->device() == policy::Device::kCpu,
              "this rollout has reset steps (a Gymnasium env with NEXT_STEP autoreset), which "
              "the CUDA learner cannot mask: set device.learner: cpu, or give recur an env "
              "factory or a SAME_STEP vector env");
  // The learner's columns: whole env sequences, or with algo.bptt_steps the rollout's pieces.
  const bool cut = cfg_.bptt_steps > 0 && cfg_.bptt_steps < rollout.T;
  const bool anchor = policy_lag > 0 && cfg_.async_anchor;
  // The anchor's critic values need GAE after them (a cut rollout's pieces cannot run GAE again:
  // they keep the behaviour values).
  const bool anchor_values = anchor && cfg_.async_anchor_values && !cut;
  // GAE and the async anchor where the learner runs (engine.h), unless the cut needs the
  // advantages on the host first.
  const bool engine_math = engine_math_ && !cut && engine_->computes_rollout_math();
  if (!engine_math) gae(rollout);
  if (cut) cut_into_sequences(rollout, cfg_.bptt_steps, sequences_);
  Rollout& r = cut ? sequences_ : rollout;
  const int N = r.N;

  UpdateStats stats;
  stats.learning_rate = cfg_.lr_schedule == "linear"
                            ? cfg_.learning_rate * std::max(0.0, 1.0 - progress)
                            : cfg_.learning_rate;
  const double clip_range = cfg_.clip_schedule == "linear"
                                ? cfg_.clip_range * std::max(0.0, 1.0 - progress)
                                : cfg_.clip_range;
  const int per_mb = N / cfg_.num_minibatches;
  std::vector<int> order(static_cast<size_t>(N));
  kernels::PpoLossConfig loss;
  loss.clip_range = clip_range;
  loss.clip_range_vf = cfg_.clip_range_vf;
  loss.vf_coef = cfg_.vf_coef;
  loss.ent_coef = cfg_.ent_coef;
  const float weight = rank_weight(rollout.T);
  if (engine_math)
    engine_->begin_update_gae(r, cfg_.gamma, cfg_.gae_lambda);
  else
    engine_->begin_update(r);
  if (anchor) {
    if (engine_math) {
      engine_->anchor_to_proximal(per_mb, anchor_values);
    } else {
      anchor_to_proximal(r, per_mb, anchor_values);
      engine_->begin_update(r);  // an engine that copies the rollout sees the new columns
    }
  }
  double kl_sum = 0, clip_sum = 0, pg_sum = 0, vl_sum = 0, ent_sum = 0, gn_sum = 0;
  double epoch_kl = 0;  // the epoch's steps taken and their KL sum: the target-KL stop
  int epoch_mbs = 0;
  std::string first_skip;  // algo.on_nonfinite: skip: where and what, for the warning
  // A minibatch's result decides: stop (throws), skip (false), or a step taken, counted (true).
  auto take = [&](const MinibatchResult& res, int epoch, int mb) {
    const double gnorm = res.grad_norm;
    if (!std::isfinite(res.loss) || !std::isfinite(gnorm)) {
      // The fp16 loss scale's overflow: no step, and the scale comes down after the update (the
      // deferred steps' device guard decides it alike: engine.h, scales_gradients).
      if (loss_scale_ && loss_scale_->tolerates_overflow() && std::isfinite(res.loss)) {
        ++stats.overflows;
        return false;
      }
      const std::string where =
          fmt::format("the update at env step {} (epoch {} of {}, minibatch {} of {})", env_steps,
                      epoch + 1, cfg_.epochs, mb + 1, cfg_.num_minibatches);
      if (cfg_.on_nonfinite == "stop")
        throw NonFiniteUpdate(fmt::format(
            "{}: {}; no step was taken. Lower algo.learning_rate (or raise algo.adam_eps, "
            "lower algo.max_grad_norm), check the env's rewards and observations for huge "
            "values, or set algo.on_nonfinite: skip to drop such minibatches",
            where, describe_nonfinite(res)));
      if (stats.skipped++ == 0) first_skip = where + ": " + describe_nonfinite(res);
      return false;
    }
    pg_sum += res.policy_loss, vl_sum += res.value_loss, ent_sum += res.entropy;
    kl_sum += res.approx_kl, clip_sum += res.clip_fraction;
    gn_sum += gnorm;
    epoch_kl += res.approx_kl;
    ++epoch_mbs;
    ++stats.minibatches;
    return true;
  };
  // Deferred steps (engine.h): the engine decides each skip and applies each step itself, and
  // the results are read once per update, or once per epoch when the target-KL stop needs each
  // epoch's KL before the next one's shuffle draws. The results are then taken as above, in
  // order, with the rng put back to each epoch's state (an error thrown there leaves it where
  // the per-minibatch flow would have).
  const bool deferred =
      deferred_steps_ && engine_->defers_steps() && (comm_ == nullptr || comm_->size() <= 1);
  const bool read_per_epoch = cfg_.target_kl > 0;
  epoch_rng_.resize(static_cast<size_t>(cfg_.epochs));
  for (int epoch = 0; epoch < cfg_.epochs; ++epoch) {
    std::iota(order.begin(), order.end(), 0);
    for (int i = N - 1; i > 0; --i)
      std::swap(order[static_cast<size_t>(i)],
                order[rng_.uniform_int(static_cast<uint64_t>(i + 1))]);
    if (deferred) {
      if (epoch == 0 || read_per_epoch)
        engine_->begin_steps((read_per_epoch ? 1 : cfg_.epochs) * cfg_.num_minibatches,
                             cfg_.max_grad_norm, stats.learning_rate, cfg_.on_nonfinite == "stop");
      for (int mb = 0; mb < cfg_.num_minibatches; ++mb)
        engine_->step(std::span<const int>(order.data() + mb * per_mb, static_cast<size_t>(per_mb)),
                      loss, cfg_.normalize_advantage);
      epoch_rng_[static_cast<size_t>(epoch)] = rng_.state();
      if (!read_per_epoch && epoch + 1 < cfg_.epochs) continue;
      const std::span<const MinibatchResult> results = engine_->end_steps();
      const int first = read_per_epoch ? epoch : 0;
      RECUR_ASSERT(results.size() == static_cast<size_t>(epoch + 1 - first) * cfg_.num_minibatches);
      for (int e = first; e <= epoch; ++e) {
        rng_.set_state(epoch_rng_[static_cast<size_t>(e)]);
        epoch_kl = 0, epoch_mbs = 0;
        for (int mb = 0; mb < cfg_.num_minibatches; ++mb)
          take(results[static_cast<size_t>(e - first) * cfg_.num_minibatches + mb], e, mb);
        stats.epochs_run = e + 1;
      }
    } else {
      epoch_kl = 0, epoch_mbs = 0;
      for (int mb = 0; mb < cfg_.num_minibatches; ++mb) {
        const std::span<const int> envs(order.data() + mb * per_mb, static_cast<size_t>(per_mb));
        MinibatchResult res = engine_->compute(envs, loss, cfg_.normalize_advantage);
        if (comm_ != nullptr && comm_->size() > 1) average_across_ranks(res, weight);
        if (take(res, epoch, mb))
          engine_->apply(res.grad_norm, cfg_.max_grad_norm, stats.learning_rate);
      }
      stats.epochs_run = epoch + 1;
    }
    if (cfg_.target_kl > 0 && epoch_mbs > 0 && epoch_kl / epoch_mbs > 1.5 * cfg_.target_kl) break;
  }
  if (loss_scale_) adapt_loss_scale(stats, env_steps);
  count_nonfinite_streak(stats, first_skip);
  check_weights_finite(env_steps);
  if (engine_math) engine_->end_update(r);  // the rollout as the host flow leaves it
  if (stats.minibatches > 0) {
    const double k = stats.minibatches;
    stats.policy_loss = pg_sum / k, stats.value_loss = vl_sum / k, stats.entropy = ent_sum / k;
    stats.approx_kl = kl_sum / k, stats.clip_fraction = clip_sum / k, stats.grad_norm = gn_sum / k;
  }
  stats.explained_variance = explained_variance(r);
  return stats;
}

float PpoUpdater::rank_weight(int T) {
  // Ranks with rollouts of unequal length (DD-PPO's preemption) weigh in by their samples.
  if (comm_ == nullptr || comm_->size() <= 1 || !unequal_rollouts_) return 1.0f;
  std::array<double, 1> steps = {static_cast<double>(T)};
  comm_->all_reduce_sum(steps, "the rollout lengths");
  return static_cast<float>(T * comm_->size() / steps[0]);
}

// The proximal policy: the learner's before this update. Ratios are taken against it; the
// behaviour policy (one update older) enters as a truncated importance weight.
void PpoUpdater::anchor_to_proximal(Rollout& r, int per_mb, bool values) {
  const int T = r.T, N = r.N;
  anchor_logp_.resize(static_cast<size_t>(T) * per_mb);
  anchor_values_.resize(values ? anchor_logp_.size() : 0);
  anchor_prox_.resize(static_cast<size_t>(T) * N);
  std::vector<int> cols(static_cast<size_t>(per_mb));
  for (int first = 0; first < N; first += per_mb) {
    std::iota(cols.begin(), cols.end(), first);
    engine_->log_probs(cols, anchor_logp_, anchor_values_);
    for (int t = 0; t < T; ++t)
      for (int j = 0; j < per_mb; ++j) {
        const size_t i = static_cast<size_t>(t) * N + first + j;
        const size_t k = static_cast<size_t>(t) * per_mb + j;
        anchor_prox_[i] = anchor_logp_[k];
        if (values) r.values[i] = anchor_values_[k];
      }
  }
  // Advantages from the learner's critic: its values of the stored steps, one update newer than
  // the actor's (measured: fewer env steps to target on both async configs).
  if (values) gae(r);
  for (size_t i = 0; i < anchor_prox_.size(); ++i) {
    r.advantages[i] *= kernels::anchor_weight(anchor_prox_[i], r.log_probs[i]);
    r.log_probs[i] = anchor_prox_[i];
  }
}

void PpoUpdater::gae(Rollout& r) const {
  compute_gae(
      r.T, r.N, cfg_.gamma, cfg_.gae_lambda, r.rewards, r.values, r.terminated, r.truncated,
      r.bootstrap_values, r.last_values, r.advantages, r.returns,
      r.has_reset_steps ? std::span<const uint8_t>(r.transition) : std::span<const uint8_t>());
}

// DD-PPO: the mean gradient of all ranks' minibatches, which is the gradient of their union's
// loss (each rank's loss is a mean over the same number of samples). A non-finite value on any
// rank makes the mean non-finite on every rank: all skip.
void PpoUpdater::average_across_ranks(MinibatchResult& res, float weight) {
  const auto t0 = std::chrono::steady_clock::now();
  std::array<float, 6> terms = {
      static_cast<float>(res.loss),       static_cast<float>(res.policy_loss),
      static_cast<float>(res.value_loss), static_cast<float>(res.entropy),
      static_cast<float>(res.approx_kl),  static_cast<float>(res.clip_fraction)};
  res.grad_norm = engine_->average_gradients(*comm_, terms, weight);
  res.loss = terms[0], res.policy_loss = terms[1], res.value_loss = terms[2];
  res.entropy = terms[3], res.approx_kl = terms[4], res.clip_fraction = terms[5];
  all_reduce_seconds_ +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void PpoUpdater::adapt_loss_scale(const UpdateStats& stats, int64_t env_steps) {
  const float before = loss_scale_->value();
  if (loss_scale_->after_update(stats.overflows, stats.minibatches)) {
    engine_->set_gradient_scale(loss_scale_->value());
    if (stats.overflows > 0)
      spdlog::info(
          "device.cudnn_data fp16: {} of {} minibatches of the update at env step {} overflowed "
          "the loss scale {} (skipped); the scale is now {}",
          stats.overflows, stats.overflows + stats.skipped + stats.minibatches, env_steps, before,
          loss_scale_->value());
    else
      spdlog::debug("device.cudnn_data fp16: {} steps without overflow; the loss scale is now {}",
                    LossScale::kGrowthSteps, loss_scale_->value());
  }
}

// algo.on_nonfinite: skip. A bad rollout is bad in every epoch, so the streak that ends the run
// counts updates with skipped minibatches, not the minibatches themselves.
void PpoUpdater::count_nonfinite_streak(const UpdateStats& stats, const std::string& first_skip) {
  if (stats.skipped > 0) {
    ++nonfinite_streak_;
    const int total = stats.skipped + stats.minibatches;
    spdlog::warn(
        "skipped {} of {} minibatches (algo.on_nonfinite: skip), the first: {}; {} "
        "update(s) in a row with skips",
        stats.skipped, total, first_skip, nonfinite_streak_);
    if (nonfinite_streak_ >= cfg_.max_nonfinite_updates)
      throw NonFiniteUpdate(
          fmt::format("{} updates in a row had minibatches with a non-finite loss or gradient "
                      "(algo.max_nonfinite_updates = {}); the last one's first: {}. Lower "
                      "algo.learning_rate or check the env's rewards and observations",
                      nonfinite_streak_, cfg_.max_nonfinite_updates, first_skip));
  } else {
    nonfinite_streak_ = 0;
  }
}

// Finite gradients, clipped, and a finite step can still overflow a weight (a learning rate near
// the float range): such weights must never reach the actor or a checkpoint.
void PpoUpdater::check_weights_finite(int64_t env_steps) const {
  if (engine_->parameters_finite()) return;
  for (const auto& [name, t] : engine_->to_tensors())
    if (const auto bad = first_nonfinite(std::span<const float>(t.data)))
      throw NonFiniteUpdate(
          fmt::format("the update at env step {} left parameter {} non-finite ({} at {}); lower "
                      "algo.learning_rate",
                      env_steps, name, t.data[*bad], describe_index(*bad, t.shape)));
}

double explained_variance(const Rollout& r) {
  const auto tn = static_cast<size_t>(r.T) * r.N;
  double rm = 0, dm = 0, count = 0;
  for (size_t i = 0; i < tn; ++i) {
    if (!r.transition[i]) continue;
    rm += r.returns[i], dm += r.returns[i] - r.values[i], ++count;
  }
  count = std::max(count, 1.0);
  rm /= count, dm /= count;
  double rv = 0, dv = 0;
  for (size_t i = 0; i < tn; ++i) {
    if (!r.transition[i]) continue;
    rv += (r.returns[i] - rm) * (r.returns[i] - rm);
    const double d = r.returns[i] - r.values[i] - dm;
    dv += d * d;
  }
  return rv > 0 ? 1.0 - dv / rv : 0.0;
}

}  // namespace recur::agent
