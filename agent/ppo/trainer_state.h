// PPO's resume state (PpoTrainer::save_state's JSON text) read back into plain values. Format
// "recur.trainer_state/2" keeps every env's recurrent state and Adam's moments as tensors in the
// job's tensor file beside the JSON (take_bulk_tensors); format 1 (data-parallel runs, and every
// file from before format 2) keeps them in the JSON as arrays. The run's resume file that holds it,
// one per rank, beside the job's counters, is agent/run/resume_state.h. parse_trainer_state checks
// every type and range and throws recur::Error on anything else (never a JSON library exception,
// never a value cast out of range); PpoTrainer::restore_state then checks that the values fit the
// run.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/rng.h"
#include "envs/env.h"
#include "policy/tensor.h"

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
  // Format 2: recurrent_states and adam are empty here; take_bulk_tensors fills them.
  bool bulk_in_tensors = false;
  // Format 2, async: the rollout collected but not yet trained on when the state was saved (its
  // arrays are the tensors "pending.*"); nullopt when none was pending.
  struct Pending {
    int64_t version = 0;    // the actor weights' version that collected it
    int64_t env_steps = 0;  // env steps at the end of its collection
    int steps = 0;          // its length T
    bool has_reset_steps = false;
  };
  std::optional<Pending> pending;
};

// Format 2's tensors: this one, the optimizer's "optim.adam.*" (by their own names) and the
// pending rollout's "pending.*" (PpoTrainer::save_pending).
inline constexpr const char* kRecurrentStates = "recurrent_states";

// Trainer::save_state() text -> values; recur::Error naming what is missing or malformed.
TrainerState parse_trainer_state(const std::string& text);
// Format 2: the recurrent states and the optimizer tensors from the tensor file's `tensors`;
// recur::Error when the states are missing (the optimizer checks its own names and sizes).
void take_bulk_tensors(const policy::TensorMap& tensors, TrainerState& t);

}  // namespace recur::agent
