// A training job end to end, whatever the algorithm (agent/algorithm.h): creates the run directory
// (resolved config.yaml, progress.csv, monitor.csv, eval.csv, tb/, checkpoints/), runs the
// algorithm, evaluates on a schedule (beside training, on a copy of the weights, with
// run.eval_async: agent/run/background_eval.h), keeps the latest, best-by-eval and periodic
// checkpoints, prints a progress line, and ends with a final deterministic evaluation. A stop
// request (Ctrl-C) finishes the current update, waits for a running evaluation, writes a
// checkpoint and returns normally. The class behind
// run_train_job (TrainJob) is in train_job.cc; what it writes is described by agent/run/
// (progress_table.h: progress.csv and TensorBoard from one table; resume_state.h: the resume
// file).
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "agent/config/config.h"
#include "agent/evaluator.h"
#include "agent/training.h"
#include "envs/batch_env.h"

namespace recur::agent {

namespace dist {
class Communicator;
}
class Algorithm;

struct TrainJobOptions {
  std::string name = "run";  // the run directory is <output_dir>/<name>-<time>
  const std::atomic<bool>* stop_requested = nullptr;  // checked after every update (Ctrl-C)
  std::filesystem::path resume_dir;                   // continue this run (empty: a new run)
  int64_t stop_at_env_steps = 0;                      // stop like Ctrl-C once reached (0: never)

  // Envs from outside recur's registry (the Python package's Gymnasium envs); config.env.id then
  // only names them. make_env(n, true) builds the n = env.num_envs training envs, make_env(n,
  // false) n evaluation envs (null: the run skips its evaluations, with a warning).
  std::function<std::unique_ptr<envs::BatchEnv>(int num_envs, bool training)> make_env;
  // Checkpoint metadata run.env_source: where make_env's envs come from ("python"); `recur eval`
  // refuses such a checkpoint without an env id of its own.
  std::string env_source;
  std::optional<double> reward_threshold;  // the target when run.target_return is null
  // With make_env: films the evaluation's first episode (run.video_every_evals) into `path` with
  // the policy (spec, tensors) deterministic, reset seed derive_seed(eval_seed, 0); returns the
  // episode's return. Empty: no videos.
  std::function<double(const std::string& path, const policy::PolicySpec& spec,
                       const policy::TensorMap& tensors, uint64_t eval_seed)>
      record_video;
  // The algorithm (null: make_algorithm, agent/algorithm.h, by algo.type): for tests and for
  // programs that bring an algorithm of their own.
  std::function<std::unique_ptr<Algorithm>(const TrainConfig&, std::unique_ptr<envs::BatchEnv>,
                                           dist::Communicator*)>
      make_algorithm;
  // A data-parallel run (agent/dist/; not owned, null: one process): this process is one rank.
  // Rank 0 alone writes the run directory and evaluates; every rank trains. A resume reads the
  // run directory on every rank (it must be on a filesystem all ranks see).
  dist::Communicator* comm = nullptr;
};

// `config_yaml` is the resolved config written into a new run directory. Resuming continues
// from the run's latest checkpoint and trainer state (agent/run/resume_state.h) and, for envs whose
// state can be saved, produces exactly the rows, evaluations, checkpoints and time to target an
// uninterrupted run would have produced. Resuming a run that is complete (its final evaluation
// written, run.total_env_steps reached) writes nothing and returns already_complete.
TrainJobResult run_train_job(const TrainConfig& config, const std::string& config_yaml,
                             const TrainJobOptions& options);

// Checkpoint metadata keys written by training jobs and read by `recur eval`.
inline constexpr const char* kMetaEnvId = "run.env_id";
inline constexpr const char* kMetaEnvOptions = "run.env_options";  // "k=v;k=v"
inline constexpr const char* kMetaEnvSteps = "run.env_steps";
inline constexpr const char* kMetaEnvSource = "run.env_source";  // absent: recur's registry
inline constexpr const char* kMetaInitFrom = "run.init_from";    // absent: a fresh policy

}  // namespace recur::agent
