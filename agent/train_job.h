// A training job end to end: creates the run directory (resolved config.yaml, progress.csv,
// monitor.csv, eval.csv, checkpoints/), runs the Trainer, evaluates on a schedule, keeps the
// latest, best-by-eval and periodic checkpoints, prints a progress line, and ends with a final
// deterministic evaluation. A stop request (Ctrl-C) finishes the current update, writes a
// checkpoint and returns normally.
#pragma once

#include <atomic>
#include <filesystem>
#include <string>

#include "agent/config.h"
#include "agent/evaluator.h"

namespace recur::agent {

struct TrainJobResult {
  std::filesystem::path run_dir;
  int64_t env_steps = 0;
  double seconds = 0;
  bool interrupted = false;
  EvalResult final_eval;  // empty when interrupted
};

// `config_yaml` is the resolved config written into the run directory; `name` names the run.
TrainJobResult run_train_job(const TrainConfig& config, const std::string& config_yaml,
                             const std::string& name, const std::atomic<bool>* stop_requested);

// Checkpoint metadata keys written by training jobs and read by `recur eval`.
inline constexpr const char* kMetaEnvId = "run.env_id";
inline constexpr const char* kMetaEnvOptions = "run.env_options";  // "k=v;k=v"
inline constexpr const char* kMetaEnvSteps = "run.env_steps";

}  // namespace recur::agent
