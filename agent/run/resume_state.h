// A run's resume file (RunDir::trainer_state(), trainer_state.json): everything beside the latest
// checkpoint that a resume needs, written by the training job (train_job.h) and read back here.
//
//   {"trainer": "<rank 0's algorithm state text>",
//    "ranks":   ["<rank 1's>", ...],                  (data-parallel runs only)
//    "trainer_tensors": "<file in checkpoints/>",     (algorithms with tensor state: a replay
//                                                      buffer; PPO's states and Adam moments)
//    "job":     {"env_steps", "returns", "lengths", "episodes", "progress_rows", "eval_rows",
//                "next_eval", "next_ckpt", "best", "elapsed",
//                "target_env_steps", "target_seconds", "train_target_env_steps",
//                "train_target_seconds", "segments", "finished", "pending_eval_seconds",
//                "confirm_rows"},
//    "previous": {the same, of the checkpoint before}}
//
// Each rank's text is the algorithm's own (e.g. PPO's "recur.trainer_state/1",
// ppo/trainer_state.h). "previous" exists because the file is written before the checkpoint: a
// process killed between the two writes leaves the older checkpoint beside a file that still names
// it. Files from before the job kept the time to target, its segments and its end lack those keys
// and read as "not reached", one segment, not finished.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace recur::agent {

// The job's counters at a checkpoint.
struct JobState {
  int64_t env_steps = 0;
  std::deque<double> returns;  // the last episodes' returns and lengths (progress statistics)
  std::deque<int> lengths;
  int64_t episodes = 0, progress_rows = 0, eval_rows = 0;
  int64_t next_eval = -1, next_ckpt = -1;  // -1: none
  std::optional<double> best;
  double elapsed = 0;  // seconds of training so far: the sum of segments
  // The first evaluation that reached the target: its env step and the wall seconds of training
  // before it (over every segment).
  std::optional<int64_t> target_env_steps;
  double target_seconds = 0;
  // The same for the mean of the last 100 training episodes (TrainJobResult).
  std::optional<int64_t> train_target_env_steps;
  double train_target_seconds = 0;
  // Wall seconds of each process that trained the run (a resume starts a new segment), up to this
  // checkpoint.
  std::vector<double> segments;
  bool finished = false;  // the final evaluation is written: the run is complete
  // An evaluation of this checkpoint's weights (at env_steps) was running beside training
  // (run.eval_async) when the state was saved: its result is not in eval_rows, best or the target.
  // A resume runs it again; the value is the elapsed seconds when its weights were taken (its time
  // to target). Absent: no evaluation pending (and in files from before run.eval_async).
  std::optional<double> pending_eval_seconds;
  // Rows in confirm.csv (run.target_confirm_episodes; absent in older files: 0).
  int64_t confirm_rows = 0;
};

struct ResumeState {
  std::vector<std::string> trainer_states;  // one per rank, rank 0 first
  std::string trainer_tensors;              // file name in checkpoints/ (empty: none)
  JobState job;
};

struct ResumeFile {
  ResumeState current;
  std::optional<ResumeState> previous;  // the generation before (absent in a run's first file)
};

// The whole file's text -> values, every type and range checked; recur::Error naming `where` (the
// file) and the key otherwise, never a JSON library exception.
ResumeFile parse_resume_file(const std::string& text, const std::string& where);
// The current generation only (parse_resume_file reads both).
ResumeState parse_resume_state(const std::string& text, const std::string& where);

// The file's text for `current` with `previous` beside it.
std::string resume_file_text(const ResumeState& current,
                             const std::optional<ResumeState>& previous);

}  // namespace recur::agent
