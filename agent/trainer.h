// A training job's engine: VectorEnv + PolicyActor (step executor) + ActorLoop on one side,
// PpoUpdater with its engine (ppo_engine.h: the host PolicyLearner + Adam, or the CUDA learner)
// on the other, and the weight publishing between them after every update (canonical tensors,
// or device to device when both sides are on the GPU). The job around it (config
// files, run directory, logs, checkpoints, evaluation schedule) lives in train_job.h.
#pragma once

#include <deque>
#include <filesystem>
#include <functional>
#include <memory>

#include "agent/actor_loop.h"
#include "agent/config.h"
#include "agent/ppo.h"
#include "envs/vector_env.h"
#include "policy/policy_actor.h"
#include "policy/policy_learner.h"

namespace recur::agent {

// The policy's shape from the env's spaces and the config (throws recur::Error for a
// Box observation of rank > 1 or an unsupported action space).
policy::PolicySpec make_policy_spec(const PolicyConfig& config, const envs::Space& observation,
                                    const envs::Space& action);

struct IterationStats {
  UpdateStats update;
  int64_t env_steps = 0;
  double act_seconds = 0, learn_seconds = 0;
  int episodes = 0;  // finished during this iteration
};

class Trainer {
 public:
  explicit Trainer(const TrainConfig& config);

  const TrainConfig& config() const { return config_; }
  const policy::PolicySpec& spec() const { return spec_; }
  // Where the actor's and the learner's cores run (device.* resolved against this machine).
  policy::Device actor_device() const { return actor_placement_.device; }
  policy::Device learner_device() const { return learner_placement_.device; }
  int64_t env_steps() const { return loop_->env_steps(); }
  bool done() const { return env_steps() >= config_.run.total_env_steps; }

  // One unroll + one PPO update; on_episode sees every finished episode (raw return).
  IterationStats iterate(const std::function<void(const EpisodeEnd&)>& on_episode);

  // Everything needed to act and to evaluate: parameters + normalizer statistics.
  policy::TensorMap policy_tensors() const;

  // Films the current policy on the evaluation's first episode (reset seed
  // derive_seed(eval_seed, 0), deterministic) into an MP4 at `path` (run.video_every_evals).
  // Uses its own env, actor and RNG: training continues exactly as without it. A video that
  // cannot be made (an env that does not render, a disk error) is logged as a warning, never
  // ends the run. Returns whether the file was written.
  bool record_video(const std::filesystem::path& path, uint64_t eval_seed) const;

  // The state that, with policy_tensors(), continues the run exactly: envs (physics, RNG,
  // bookkeeping), recurrent states, normalizer statistics in float64, reward normalizer, RNG
  // streams, optimizer moments. JSON text (doubles and 64-bit integers round trip exactly).
  std::string save_state() const;
  // Restores a Trainer built from the same config; throws recur::Error naming what does not fit.
  void restore_state(const std::string& json, const policy::TensorMap& policy_tensors);

 private:
  TrainConfig config_;
  policy::Placement actor_placement_, learner_placement_;
  std::unique_ptr<envs::VectorEnv> venv_;
  policy::PolicySpec spec_;
  std::unique_ptr<policy::PolicyActor> actor_;
  std::unique_ptr<ActorLoop> loop_;
  std::unique_ptr<PpoUpdater> ppo_;
  Rollout rollout_;
};

}  // namespace recur::agent
