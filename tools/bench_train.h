// `recur bench train`: a training config's throughput in the synchronous and the async
// (algo.async) actor-learner modes, measured one after the other in one process: env steps/s,
// where the time goes (acting, learning, the learner waiting for the actor) and the policy lag.
#pragma once

#include <string>
#include <vector>

#include "agent/config.h"

namespace recur::cli {

struct TrainBenchRow {
  std::string mode;  // sync | async
  int updates = 0;   // timed updates (after one untimed warm-up update)
  int64_t env_steps = 0;
  double seconds = 0;
  double act_s = 0, learn_s = 0, wait_s = 0;  // summed over the timed updates
  double lag_mean = 0;
  int lag_max = 0;
  double steps_per_s() const { return static_cast<double>(env_steps) / seconds; }
};

// Trains a fresh Trainer from `config` for 1 + `updates` updates in each mode of `modes`.
std::vector<TrainBenchRow> bench_train(const agent::TrainConfig& config, int updates,
                                       const std::vector<std::string>& modes);

}  // namespace recur::cli
