// The run directory of a training job: everything one run leaves behind, in one place.
//
//   <output_dir>/<name>-<YYYYmmdd-HHMMSS>[-N]/
//     config.yaml                 the resolved config that ran (written atomically)
//     progress.csv                one row per update (CsvLog)
//     monitor.csv                 one row per finished episode, SB3 Monitor format (MonitorLog)
//     eval.csv                    one row per evaluation (CsvLog)
//     confirm.csv                 one row per evaluation at the target that more episodes of the
//                                 same weights confirmed or not (run.target_confirm_episodes > 0)
//     trainer_state.safetensors   what a resume needs beyond the policy (counters, RNG, ...)
//     checkpoints/latest.safetensors, best.safetensors, target.safetensors (the weights that first
//                 reached the target), step_<env_steps>.safetensors,
//                 algorithm_state-<env_steps>.safetensors (the resume state's tensors: the latest
//                 generation's and the one before, which the resume file may fall back to)
//
// A new run never reuses a directory: if the timestamped name exists (two runs started in the same
// second), -2, -3, ... is appended. A directory counts as a run directory when it holds
// config.yaml, which is what open() checks before a resume touches anything in it.
#pragma once

#include "core/atomic_file.h"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

namespace recur::agent {

class RunDir {
 public:
  // Creates <output_dir>/<name>-<timestamp>[-N]/ and its checkpoints/ (output_dir is created if
  // missing). The timestamp is local time; `now` is a parameter so that tests can force a
  // collision.
  static RunDir create(
      const std::filesystem::path& output_dir, const std::string& name,
      std::chrono::system_clock::time_point now = std::chrono::system_clock::now());
  // Opens an existing run directory for resume; throws recur::Error naming the path when it is
  // missing or holds no config.yaml. Removes the temp files a killed run left in it, in
  // checkpoints/ and in videos/ (core/atomic_file.h: remove_stale_temps).
  static RunDir open(const std::filesystem::path& dir);

  const std::filesystem::path& path() const { return dir_; }

  std::filesystem::path config_yaml() const { return dir_ / "config.yaml"; }
  std::filesystem::path progress_csv() const { return dir_ / "progress.csv"; }
  std::filesystem::path monitor_csv() const { return dir_ / "monitor.csv"; }
  std::filesystem::path eval_csv() const { return dir_ / "eval.csv"; }
  std::filesystem::path confirm_csv() const { return dir_ / "confirm.csv"; }
  std::filesystem::path trainer_state() const { return dir_ / "trainer_state.safetensors"; }
  std::filesystem::path checkpoints_dir() const { return dir_ / "checkpoints"; }
  std::filesystem::path latest_checkpoint() const;
  std::filesystem::path best_checkpoint() const;
  // The weights whose evaluation first reached the target (confirmed, with
  // run.target_confirm_episodes): the policy that solved the task, which a run stopped at the
  // target has trained past.
  std::filesystem::path target_checkpoint() const;
  std::filesystem::path step_checkpoint(int64_t env_steps) const;

  // Writes config.yaml atomically (temp file + fsync + rename): a crash leaves the old file or
  // the new one, and a directory with a config.yaml is always a complete run directory.
  void write_config(const std::string& yaml) const;

 private:
  explicit RunDir(std::filesystem::path dir) : dir_(std::move(dir)) {}
  std::filesystem::path dir_;
};

// Atomic writes live in core/atomic_file.h; kept visible here for the run directory's users.
using ::recur::write_file_atomic;

}  // namespace recur::agent
