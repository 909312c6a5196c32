// Recurrent PPO's update: GAE over the rollout, then `epochs` passes over minibatches made of
// WHOLE env sequences (T steps of a subset of the envs, replayed through the sequence executor
// from their stored initial states with the stored episode-start resets), the clipped surrogate,
// the (optionally clipped) value loss, the entropy bonus, global grad-norm clipping and Adam.
// A non-finite loss or gradient norm stops the run (algo.on_nonfinite: stop, NonFiniteUpdate) or
// skips that minibatch's step (skip: one warning per update; after max_nonfinite_updates updates
// in a row with skips the run stops). Nothing non-finite reaches the weights: parameters are
// checked after every update.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include "policy/aligned.h"

#include "agent/algorithm.h"
#include "agent/config/config.h"
#include "agent/ppo/engine.h"
#include "agent/ppo/loss_scale.h"
#include "agent/rollout.h"
#include "core/error.h"
#include "core/rng.h"
#include "policy/policy_learner.h"

namespace recur::agent {

// NonFiniteUpdate (agent/algorithm.h): a non-finite loss, gradient or parameter ended the update.

struct UpdateStats {
  double policy_loss = 0, value_loss = 0, entropy = 0, approx_kl = 0, clip_fraction = 0;
  double explained_variance = 0, grad_norm = 0, learning_rate = 0;
  int minibatches = 0, skipped = 0, epochs_run = 0;
  // fp16 gradients (PpoEngine::scales_gradients): minibatches skipped for overflowing the loss
  // scale (not counted in `skipped`); the scale itself is PpoUpdater::loss_scale().
  int overflows = 0;
};

class PpoUpdater {
 public:
  // The update runs on `engine` (engine.h: host or CUDA). With `comm` (not owned; a
  // data-parallel run, agent/dist/) each minibatch's gradients and loss terms are averaged across
  // the ranks before the step (every rank must run the same number of minibatches), so that the
  // non-finite skips, the clip and the target-KL stop are decided on the same numbers everywhere.
  PpoUpdater(const AlgoConfig& config, std::unique_ptr<PpoEngine> engine, uint64_t seed,
             dist::Communicator* comm = nullptr);
  // On the host engine over `learner` (not owned).
  PpoUpdater(const AlgoConfig& config, policy::PolicyLearner& learner, uint64_t seed);

  // Computes GAE into the rollout and updates the learner's parameters. progress in [0, 1]
  // drives the linear learning-rate schedule.
  // env_steps names the update in warnings and errors.
  // policy_lag > 0 (the async pipeline) with algo.async_anchor re-anchors the ratio at the
  // learner's current policy (see AlgoConfig::async_anchor).
  UpdateStats update(Rollout& rollout, double progress, int64_t env_steps = 0, int policy_lag = 0);

  PpoEngine& engine() { return *engine_; }
  const PpoEngine& engine() const { return *engine_; }
  Rng& rng() { return rng_; }
  const Rng& rng() const { return rng_; }
  int consecutive_nonfinite() const { return nonfinite_streak_; }
  // The dynamic loss scale (loss_scale.h) of an engine with 16-bit gradients; null without.
  const LossScale* loss_scale() const { return loss_scale_ ? &*loss_scale_ : nullptr; }
  double all_reduce_seconds() const { return all_reduce_seconds_; }
  // Data-parallel with DD-PPO's preemption: rollouts may differ in length across ranks, so each
  // rank's gradients are weighted by its share of the samples (one more all-reduce per update).
  void set_unequal_rollouts(bool on) { unequal_rollouts_ = on; }
  void set_consecutive_nonfinite(int n) { nonfinite_streak_ = n; }
  // On (the default): an engine with deferred steps (engine.h, the CUDA engine) runs the
  // minibatches without a host read after each; off: compute() and apply() per minibatch, the
  // flow the deferred one must equal (tests compare them).
  void set_deferred_steps(bool on) { deferred_steps_ = on; }
  // On (the default): an engine that computes the rollout math (engine.h, the CUDA engine) does
  // GAE and the async anchor where it runs; off: the host computes them, the flow the engine's
  // must equal (tests compare them).
  void set_engine_rollout_math(bool on) { engine_math_ = on; }

 private:
  float rank_weight(int T);
  // values: the learner's critic replaces r's values and GAE runs again (async_anchor_values).
  void anchor_to_proximal(Rollout& r, int per_mb, bool values);
  // GAE of r into its advantages and returns (agent/ppo/gae.h).
  void gae(Rollout& r) const;
  void average_across_ranks(MinibatchResult& res, float weight);
  void count_nonfinite_streak(const UpdateStats& stats, const std::string& first_skip);
  void check_weights_finite(int64_t env_steps) const;
  void adapt_loss_scale(const UpdateStats& stats, int64_t env_steps);

  AlgoConfig cfg_;
  std::unique_ptr<PpoEngine> engine_;
  Rng rng_;
  int nonfinite_streak_ = 0;
  dist::Communicator* comm_ = nullptr;
  double all_reduce_seconds_ = 0;
  bool unequal_rollouts_ = false;
  std::vector<float> anchor_logp_;    // (T, N / num_minibatches) scratch of async_anchor
  std::vector<float> anchor_values_;  // the same, the critic's (async_anchor_values)
  std::vector<float> anchor_prox_;    // (T, N): every column's proximal log-probs
  Rollout sequences_;                 // algo.bptt_steps: the rollout cut into sequences (bptt.h)
  bool deferred_steps_ = true;
  bool engine_math_ = true;
  std::vector<Rng::State> epoch_rng_;  // deferred steps: the rng after each epoch's shuffle
  // fp16 gradients: restarts at policy::kFp16GradientScale in every process (not checkpointed).
  std::optional<LossScale> loss_scale_;
};

// Explained variance of the rollout's values with respect to its returns (transitions only; 0
// when the returns do not vary).
double explained_variance(const Rollout& r);

}  // namespace recur::agent
