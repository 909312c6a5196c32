// The interface between a training job (train_job.h) and the algorithm it runs.
//
// The job owns everything every algorithm shares: the run directory, the schedule (evaluations,
// checkpoints, the env-step budget), resume, Ctrl-C, the data-parallel ranks' agreement,
// non-finite reporting, time to target and the logs (progress.csv, TensorBoard, monitor.csv). An
// algorithm owns its envs, actor and learner and nothing on disk: it never writes a file and never
// decides an exit code. Between two calls of iterate() it is quiet (no thread of it runs), so the
// job may read its policy, save its state or evaluate.
//
// One iterate() is one row of progress.csv: whatever unit of work the algorithm logs at. PPO
// (agent/ppo/) collects a rollout and runs one update on it. A replay-based learner would collect
// its train_freq steps into the replay buffer and run its gradient steps (update-to-data ratio,
// learning starts, target-network updates all inside), reporting its own metric columns; its
// replay buffer goes into its saved state (AlgorithmState::tensors). docs/ARCHITECTURE.md, "The
// training job and its algorithms", says how to add one.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "agent/actor_loop.h"
#include "agent/config/config.h"
#include "core/error.h"
#include "envs/batch_env.h"
#include "policy/device_choice.h"
#include "policy/devices.h"
#include "policy/policy_spec.h"
#include "policy/tensor.h"

namespace recur::agent {

namespace dist {
class Communicator;
}

// A non-finite loss, gradient or parameter ended an update: the algorithm's weights are those of
// before the offending step (or non-finite parameters, which the job never saves). The job turns
// it into an error that says which checkpoint is the last good one.
class NonFiniteUpdate : public Error {
 public:
  using Error::Error;
};

// One algorithm metric: its progress.csv column and its TensorBoard tag (Stable-Baselines3's
// names where SB3 logs the same quantity), written as value * tb_scale (SB3's
// train/entropy_loss is -entropy). Integer columns are written without a fraction.
struct MetricColumn {
  std::string csv;
  std::string tag;
  double tb_scale = 1;
  bool integer = false;
};

// What one iterate() did.
struct Iteration {
  int64_t env_steps = 0;  // collected so far (async: including what is not yet trained on)
  // act: the actor collecting (async: on its own thread, overlapping learn); learn: the updates
  // and the weight publish; wait: the learner idle, waiting for the actor.
  double act_seconds = 0, learn_seconds = 0, wait_seconds = 0;
  // Updates between the weights that collected the data trained on and the weights it trained:
  // 0 for an on-policy synchronous update.
  int policy_lag = 0;
  int64_t policy_version = 0;   // updates applied to the learner after this iteration
  int episodes = 0;             // finished during this iteration
  std::vector<double> metrics;  // one per Algorithm::metric_columns(), in order
};

// An algorithm's resume state: JSON text (doubles and 64-bit integers round trip exactly) and,
// for bulky state such as a replay buffer, named tensors that the job stores beside it in a
// safetensors file. Restoring both into an algorithm built from the same config continues the run
// exactly, as far as the envs can snapshot.
struct AlgorithmState {
  std::string json;
  policy::TensorMap tensors;
};

class Algorithm {
 public:
  virtual ~Algorithm() = default;

  // The acting policy: what evaluations, videos and checkpoints use (parameters and normalizer
  // statistics, as policy/policy_checkpoint.h saves them).
  virtual const policy::PolicySpec& spec() const = 0;
  virtual policy::TensorMap policy_tensors() const = 0;

  // Where the actor's and the learner's cores run (device.* resolved against this machine, `auto`
  // decided): what `recur bench train` names its rows by.
  virtual policy::Device actor_device() const = 0;
  virtual policy::Device learner_device() const = 0;

  // Env steps collected so far (every rank's in a data-parallel run), and whether the budget
  // (run.total_env_steps) is collected and trained on.
  virtual int64_t env_steps() const = 0;
  virtual bool done() const = 0;

  // The columns of Iteration::metrics (fixed for the algorithm's life).
  virtual const std::vector<MetricColumn>& metric_columns() const = 0;

  // One unit of work. on_episode sees every finished episode (raw return), on the calling thread;
  // in a data-parallel run rank 0 sees every rank's, the others none. Throws NonFiniteUpdate
  // when a loss, gradient or weight is not finite.
  virtual Iteration iterate(const std::function<void(const EpisodeEnd&)>& on_episode) = 0;
  // A pipelined algorithm holds data collected but not yet trained on between iterations;
  // settle() trains on it without collecting more, so that its state can be saved.
  virtual bool pending() const { return false; }
  virtual Iteration settle() { return {}; }
  // save_state() also saves pending data (and restore_state() brings it back pending), so that a
  // stop needs no settle(): the resumed run goes on as if it had not been stopped. (The job
  // still settles at evaluation points: train_job.cc says why.)
  virtual bool saves_pending() const { return false; }

  // Resume state (requires !pending() unless saves_pending()), and its restore into an
  // algorithm built from the same config; restore throws recur::Error naming what does not fit.
  virtual AlgorithmState save_state() const = 0;
  virtual void restore_state(const AlgorithmState& state,
                             const policy::TensorMap& policy_tensors) = 0;

  virtual double all_reduce_seconds() const { return 0; }  // data-parallel communication

  // run.init_from, before the first iterate(); everything not loaded stays fresh (the optimizer's
  // moments, counters, RNG, a replay buffer).
  // An algorithm whose learner trains only the policy (PPO) starts from a policy checkpoint:
  // load_policy() replaces its parameters and observation-normalizer statistics with those of a
  // trained policy of the same spec (policy_tensors()' names). False: it cannot.
  virtual bool load_policy(const policy::TensorMap& /*policy_tensors*/) { return false; }
  // One that trains more than the policy (off-policy critics and their targets, which a policy
  // checkpoint does not hold) starts from a run's saved state instead: save_state() of a run of
  // the same algo.type, of which load_trained() takes the learned parameters only. Throws
  // recur::Error naming what does not fit.
  virtual bool starts_from_state() const { return false; }
  virtual void load_trained(const AlgorithmState& /*state*/) {}
};

// The policy's shape from the env's spaces and the config (throws recur::Error for a Box
// observation of rank > 1 or an unsupported action space).
policy::PolicySpec make_policy_spec(const PolicyConfig& config, const envs::Space& observation,
                                    const envs::Space& action);

// device.actor / device.learner against this build and machine (`auto` is logged with its
// reason); recur::Error when the choice cannot run here. `auto` also stays on the CPU for the
// learner of mingru, mingru_highway and lstm_ln (policy.core, `core`), whose fused CUDA sequence
// kernels have not yet run on a GPU; `cuda` takes them.
policy::Placement resolve_placement(const std::string& key, const std::string& value,
                                    const DeviceConfig& device, const policy::DeviceReport& report,
                                    const std::string& core);

// The envs a job's algorithm steps: `env` when given (it must hold env.num_envs envs), else a
// VectorEnv of config.env (its options, run.threads stepping threads).
std::unique_ptr<envs::BatchEnv> make_batch_env(const TrainConfig& config,
                                               std::unique_ptr<envs::BatchEnv> env);

// The algorithm of config.algo.type over `env` (null: a VectorEnv of config.env) and `comm`
// (not owned; null: one process).
std::unique_ptr<Algorithm> make_algorithm(const TrainConfig& config,
                                          std::unique_ptr<envs::BatchEnv> env = nullptr,
                                          dist::Communicator* comm = nullptr);

}  // namespace recur::agent
