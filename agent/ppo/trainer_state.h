// The resume state of a run as read back from its run directory (RunDir::trainer_state()):
//
//   {"trainer": "<rank 0's Trainer::save_state() text>",
//    "ranks":   ["<rank 1's>", ...],                     (data-parallel runs only)
//    "job":     {"env_steps", "returns", "lengths", "episodes", "progress_rows", "eval_rows",
//                "next_eval", "next_ckpt", "best", "elapsed"}}
//
// where each rank's text is itself JSON (format "recur.trainer_state/1", Trainer::save_state).
// The parse_* functions turn that text into plain values, checking every type and range, and
// throw recur::Error on anything else (never a JSON library exception, never a value cast out of
// range); Trainer::restore_state and the train job then check that the values fit the run.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/rng.h"
#include "envs/env.h"

namespace recur::agent {

// One rank's Trainer state.
struct TrainerState {
  int64_t env_steps = 0;        // every rank's steps
  int64_t local_env_steps = 0;  // this rank's (env_steps when absent)
  int rank = 0, world_size = 1;
  int64_t policy_version = 0;  // 0 when absent (states from before the async mode)
  // The envs' snapshots and the batch's episode-start flags; nullopt when the envs could not be
  // saved (envs outside recur): they restart on resume.
  std::optional<std::vector<envs::Env::Snapshot>> envs;
  std::vector<uint8_t> venv_episode_start;
  std::vector<float> recurrent_states;
  std::vector<double> obs_mean, obs_var;
  double obs_count = 0;
  std::vector<double> reward_running_return;
  double reward_mean = 0, reward_var = 1, reward_count = 0;
  Rng::State loop_rng{};
  std::vector<uint8_t> next_episode_start;
  bool loop_started = false;
  Rng::State ppo_rng{};
  int nonfinite_streak = 0;
  std::map<std::string, std::vector<float>> adam;  // optimizer tensors by name, flattened
};

// Trainer::save_state() text -> values; recur::Error naming what is missing or malformed.
TrainerState parse_trainer_state(const std::string& text);

// The train job's counters, saved beside the trainer state.
struct JobState {
  int64_t env_steps = 0;
  std::deque<double> returns;  // the last episodes' returns and lengths (progress statistics)
  std::deque<int> lengths;
  int64_t episodes = 0, progress_rows = 0, eval_rows = 0;
  int64_t next_eval = -1, next_ckpt = -1;  // -1: none
  std::optional<double> best;
  double elapsed = 0;  // seconds
};

struct ResumeState {
  std::vector<std::string> trainer_states;  // one per rank, rank 0 first (parse_trainer_state)
  JobState job;
};

// The whole file's text -> values; `where` names the file in messages.
ResumeState parse_resume_state(const std::string& text, const std::string& where);

}  // namespace recur::agent
