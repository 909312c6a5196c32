// PPO as a training job's algorithm (agent/algorithm.h): the envs (a VectorEnv, or any
// envs::BatchEnv) + PolicyActor (step executor) + ActorLoop on one side, PpoUpdater with its
// engine (engine.h: the host PolicyLearner + Adam, or the CUDA learner) on the other, and the
// weight publishing between them after every update (canonical tensors, or device to device when
// both sides are on the GPU). The job around it (run directory, logs, checkpoints, evaluation
// schedule, resume) is agent/train_job.h.
#pragma once

#include <deque>
#include <filesystem>
#include <functional>
#include <memory>

#include <nlohmann/json_fwd.hpp>

#include "agent/actor_loop.h"
#include "agent/algorithm.h"
#include "agent/config/config.h"
#include "agent/ppo/trainer_state.h"
#include "agent/ppo/updater.h"
#include "envs/batch_env.h"
#include "policy/policy_actor.h"
#include "policy/policy_learner.h"

namespace recur::agent {

namespace dist {
class Communicator;
}

class PpoTrainer final : public Algorithm {
 public:
  // `env`: the training envs when they do not come from recur's registry (config.env.id then
  // only names them); it must hold config.env.num_envs envs. Null: a VectorEnv of config.env.
  // `comm` (not owned; null: one process): this trainer is one rank of a data-parallel run
  // (DD-PPO, agent/dist/). Its envs are envs rank * num_envs.. of the run (seeds derived from the
  // run seed and the rank), every minibatch's gradients are averaged across the ranks, the
  // normalizers' statistics are merged after every rollout, and env_steps() counts every rank's
  // steps; every rank holds the same weights after every update.
  explicit PpoTrainer(const TrainConfig& config, std::unique_ptr<envs::BatchEnv> env = nullptr,
                      dist::Communicator* comm = nullptr);

  const TrainConfig& config() const { return config_; }
  const policy::PolicySpec& spec() const override { return spec_; }
  policy::Device actor_device() const override { return actor_placement_.device; }
  policy::Device learner_device() const override { return learner_placement_.device; }
  // Collected so far, by every rank of a data-parallel run.
  int64_t env_steps() const override { return comm_ ? global_env_steps_ : loop_->env_steps(); }
  dist::Communicator* communicator() const { return comm_; }
  // Seconds spent in the gradient all-reduces so far (0 on one process).
  double all_reduce_seconds() const override;
  // Every env step collected and trained on.
  bool done() const override { return env_steps() >= config_.run.total_env_steps && !pending_; }

  // policy_loss, value_loss, entropy, approx_kl, clip_fraction, explained_variance,
  // learning_rate, grad_norm, skipped_updates: UpdateStats under SB3's PPO tags.
  const std::vector<MetricColumn>& metric_columns() const override;
  // The last update's statistics (those of the Iteration just returned).
  const UpdateStats& last_update() const { return last_update_; }

  // Synchronous (algo.async false): one unroll, then one PPO update, then the publish.
  // Async: the learner trains on the rollout collected last (collecting it first if none is
  // pending) while the actor thread collects the next one with the current weights (unless all
  // env steps are collected); both finish before this returns, then the new weights are
  // published. Between calls nothing runs, so evaluation, checkpoints and policy_tensors() see
  // a quiet trainer. on_episode sees every finished episode (raw return), on the calling thread.
  Iteration iterate(const std::function<void(const EpisodeEnd&)>& on_episode) override;
  // Async: a collected rollout is waiting for the learner.
  bool pending() const override { return pending_; }
  // Async: trains on the pending rollout without collecting another (the job does so at every
  // evaluation point and before the final evaluation; train_job.cc says why).
  Iteration settle() override;
  // Async on one process: save_state() keeps the pending rollout (format 2's tensors), so a stop
  // (Ctrl-C, SIGTERM) need not drain the pipeline, and the resumed run is the one that was not
  // stopped; draining there inserted a lag-0 rollout the unbroken run did not have.
  bool saves_pending() const override { return config_.algo.async && comm_ == nullptr; }

  // Everything needed to act and to evaluate: parameters + normalizer statistics.
  policy::TensorMap policy_tensors() const override;

  // The state that, with policy_tensors(), continues the run exactly: envs (physics, RNG,
  // bookkeeping; envs that cannot snapshot restart their episodes on restore), recurrent states,
  // normalizer statistics in float64, reward normalizer, RNG streams, optimizer moments, and the
  // pending rollout (async). JSON text (doubles and 64-bit integers round trip exactly) with the
  // bulky float arrays as tensors (agent/ppo/trainer_state.h: format 2; a data-parallel run keeps
  // everything in the JSON, format 1, and settles first).
  AlgorithmState save_state() const override;
  // Restores a PpoTrainer built from the same config; throws recur::Error naming what does not
  // fit.
  void restore_state(const AlgorithmState& state, const policy::TensorMap& policy_tensors) override;
  // The learner's and the actor's weights and the observation normalizer from policy_tensors()'
  // names (a checkpoint's); the optimizer, the reward normalizer and the envs stay as built.
  bool load_policy(const policy::TensorMap& policy_tensors) override;

 private:
  TrainConfig config_;
  dist::Communicator* comm_ = nullptr;
  int64_t global_env_steps_ = 0;  // data-parallel: every rank's env steps
  // Data-parallel: the normalizers' statistics every rank agreed on at the last merge.
  dist::Moments agreed_obs_, agreed_reward_;
  policy::Placement actor_placement_, learner_placement_;
  std::unique_ptr<envs::BatchEnv> venv_;
  policy::PolicySpec spec_;
  std::unique_ptr<policy::PolicyActor> actor_;
  std::unique_ptr<ActorLoop> loop_;
  std::unique_ptr<PpoUpdater> ppo_;

  Iteration iterate_sync(const std::function<void(const EpisodeEnd&)>& on_episode);
  // may_collect false: train on the pending rollout only (settle()).
  Iteration iterate_async(const std::function<void(const EpisodeEnd&)>& on_episode,
                          bool may_collect);
  // Collects rollouts_[slot] with the actor's weights (version actor_version_); the finished
  // episodes go to ends_[slot], delivered later on the calling thread. Returns seconds.
  double collect_into(int slot);
  // After a collection, on the calling thread (the one that talks to the other ranks): the ranks
  // merge their env steps, normalizer statistics and finished episodes (rank 0 receives every
  // rank's, with run-wide env indices; the others none). One process: only the bookkeeping.
  void merge_collection(int slot);
  // agreed_* := the normalizers' current statistics (at the start, and after a restore).
  void agree_on_current_statistics();
  // One PPO update on rollouts_[slot] and the publish to the actor.
  void learn_from(int slot, Iteration& it);
  // The pending rollout into save_state()'s JSON and tensors, and back (trainer_state.cc).
  void save_pending(nlohmann::json& j, policy::TensorMap& tensors) const;
  void restore_pending(const TrainerState& t, const policy::TensorMap& tensors);

  // Two rollout buffers: the learner reads one while the actor fills the other.
  Rollout rollouts_[2];
  int64_t rollout_version_[2] = {0, 0};    // actor weights version that collected each
  int64_t rollout_env_steps_[2] = {0, 0};  // env steps at the end of each's collection
  int current_ = 0;                        // the pending (async) or last rollout
  bool pending_ = false;
  int64_t learner_version_ = 0;  // updates applied
  // The version the actor holds; written only while the actor thread is not running.
  int64_t actor_version_ = 0;
  std::vector<EpisodeEnd> ends_[2];
  // dist.sync_frac: collections done (the preemption round), and whether preemption is on.
  int64_t round_ = 0;
  bool preempt_ = false;
  UpdateStats last_update_;
};

}  // namespace recur::agent
