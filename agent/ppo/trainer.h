// A training job's engine: the envs (a VectorEnv, or any envs::BatchEnv) + PolicyActor (step
// executor) + ActorLoop on one side, PpoUpdater with its engine (engine.h: the host
// PolicyLearner + Adam, or the CUDA learner) on the other, and the weight publishing between them
// after every update (canonical tensors, or device to device when both sides are on the GPU). The
// job around it (config files, run directory, logs, checkpoints, evaluation schedule) lives in
// train_job.h.
#pragma once

#include <deque>
#include <filesystem>
#include <functional>
#include <memory>

#include "agent/actor_loop.h"
#include "agent/config/config.h"
#include "agent/ppo/updater.h"
#include "envs/batch_env.h"
#include "policy/policy_actor.h"
#include "policy/policy_learner.h"

namespace recur::agent {

namespace dist {
class Communicator;
}

// The policy's shape from the env's spaces and the config (throws recur::Error for a
// Box observation of rank > 1 or an unsupported action space).
policy::PolicySpec make_policy_spec(const PolicyConfig& config, const envs::Space& observation,
                                    const envs::Space& action);

struct IterationStats {
  UpdateStats update;
  int64_t env_steps = 0;  // collected so far (async: including the rollout not yet trained on)
  // act: the actor collecting (async: on its own thread, overlapping learn); learn: the update
  // and the weight publish; wait: the learner idle, waiting for the actor's rollout.
  double act_seconds = 0, learn_seconds = 0, wait_seconds = 0;
  // Updates between the weights that collected the trained rollout and the weights it trained:
  // 0 in the synchronous mode, 1 in the async pipeline (0 on its first update).
  int policy_lag = 0;
  int64_t policy_version = 0;  // updates applied to the learner after this iteration
  int episodes = 0;            // finished during this iteration
};

class Trainer {
 public:
  // `env`: the training envs when they do not come from recur's registry (config.env.id then
  // only names them); it must hold config.env.num_envs envs. Null: a VectorEnv of config.env.
  // `comm` (not owned; null: one process): this trainer is one rank of a data-parallel run
  // (DD-PPO, agent/dist/). Its envs are envs rank * num_envs.. of the run (seeds derived from the
  // run seed and the rank), every minibatch's gradients are averaged across the ranks, the
  // normalizers' statistics are merged after every rollout, and env_steps() counts every rank's
  // steps; every rank holds the same weights after every update.
  explicit Trainer(const TrainConfig& config, std::unique_ptr<envs::BatchEnv> env = nullptr,
                   dist::Communicator* comm = nullptr);

  const TrainConfig& config() const { return config_; }
  const policy::PolicySpec& spec() const { return spec_; }
  // Where the actor's and the learner's cores run (device.* resolved against this machine).
  policy::Device actor_device() const { return actor_placement_.device; }
  policy::Device learner_device() const { return learner_placement_.device; }
  // Collected so far, by every rank of a data-parallel run.
  int64_t env_steps() const { return comm_ ? global_env_steps_ : loop_->env_steps(); }
  dist::Communicator* communicator() const { return comm_; }
  // Seconds spent in the gradient all-reduces so far (0 on one process).
  double all_reduce_seconds() const;
  // Every env step collected and trained on.
  bool done() const { return env_steps() >= config_.run.total_env_steps && !pending_; }

  // Synchronous (algo.async false): one unroll, then one PPO update, then the publish.
  // Async: the learner trains on the rollout collected last (collecting it first if none is
  // pending) while the actor thread collects the next one with the current weights (unless all
  // env steps are collected); both finish before this returns, then the new weights are
  // published. Between calls nothing runs, so evaluation, checkpoints and policy_tensors() see
  // a quiet trainer. on_episode sees every finished episode (raw return), on the calling thread.
  IterationStats iterate(const std::function<void(const EpisodeEnd&)>& on_episode);
  // Async: a collected rollout is waiting for the learner.
  bool pending() const { return pending_; }
  // Async: trains on the pending rollout without collecting another, so that the trainer's
  // state can be saved (save_state() requires !pending()) and a resume continues exactly.
  IterationStats settle();

  // Everything needed to act and to evaluate: parameters + normalizer statistics.
  policy::TensorMap policy_tensors() const;

  // Films the current policy on the evaluation's first episode (reset seed
  // derive_seed(eval_seed, 0), deterministic) into an MP4 at `path` (run.video_every_evals).
  // Uses its own env, actor and RNG: training continues exactly as without it. A video that
  // cannot be made (an env that does not render, a disk error) is logged as a warning, never
  // ends the run. Returns whether the file was written.
  bool record_video(const std::filesystem::path& path, uint64_t eval_seed) const;

  // The state that, with policy_tensors(), continues the run exactly: envs (physics, RNG,
  // bookkeeping; envs that cannot snapshot restart their episodes on restore), recurrent states,
  // normalizer statistics in float64, reward normalizer, RNG streams, optimizer moments. JSON text
  // (doubles and 64-bit integers round trip exactly).
  std::string save_state() const;
  // Restores a Trainer built from the same config; throws recur::Error naming what does not fit.
  void restore_state(const std::string& json, const policy::TensorMap& policy_tensors);

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

  IterationStats iterate_sync(const std::function<void(const EpisodeEnd&)>& on_episode);
  // may_collect false: train on the pending rollout only (settle()).
  IterationStats iterate_async(const std::function<void(const EpisodeEnd&)>& on_episode,
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
  void learn_from(int slot, IterationStats& it);

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
};

}  // namespace recur::agent
