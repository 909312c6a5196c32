// `recur bench train`: a training config's throughput in the synchronous and the async
// (algo.async) actor-learner modes, and on several actor/learner device pairs (e.g. cuda/cuda
// against cpu/cpu), measured one after the other in one process: env steps/s, where the time
// goes (acting, learning, the learner waiting for the actor) and the policy lag. Rows name the
// devices the trainer resolved (`auto` becomes cpu or cuda), not the config's words.
//
// Any algo.type: PPO times updates (one rollout each); SAC and TD3 time iterations
// (offpolicy.steps_per_iteration env steps each, with their gradient updates), after a warm-up
// that collects offpolicy.learning_starts, so that every timed iteration trains at its
// update-to-data ratio. The replay learner has no async mode.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agent/config/config.h"

namespace recur::cli {

struct TrainBenchRow {
  std::string devices;  // resolved actor/learner, e.g. cuda/cuda
  std::string mode;     // sync | async
  int updates = 0;      // timed iterations (after the untimed warm-up)
  int64_t env_steps = 0;
  // Learner updates in the timed iterations (Iteration::policy_version's growth): SAC/TD3's
  // gradient updates; PPO's equal `updates`.
  int64_t learner_updates = 0;
  double seconds = 0;
  double act_s = 0, learn_s = 0, wait_s = 0;  // summed over the timed updates
  // Episodes that ended in the timed updates: a fresh policy's are short, and every episode start
  // inside a learner sequence cuts it (the CUDA learner's cuDNN calls run the pieces).
  int64_t episodes = 0;
  double lag_mean = 0;
  int lag_max = 0;
  double steps_per_s() const { return static_cast<double>(env_steps) / seconds; }
  double learner_updates_per_s() const { return static_cast<double>(learner_updates) / seconds; }
};

// Trains config.algo.type's algorithm from `config` for its warm-up and then `updates` timed
// iterations in each mode of `modes`, for each "actor/learner" pair of `devices` (each cpu, cuda
// or auto; empty: the config's devices). Each starts fresh, or from config.run.init_from's trained
// policy (SAC/TD3: run). Every argument is checked before any training.
std::vector<TrainBenchRow> bench_train(const agent::TrainConfig& config, int updates,
                                       const std::vector<std::string>& modes,
                                       const std::vector<std::string>& devices = {});

}  // namespace recur::cli
