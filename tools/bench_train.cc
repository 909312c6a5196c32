#include "tools/bench_train.h"

#include <algorithm>
#include <chrono>

#include "agent/trainer.h"
#include "core/error.h"

namespace recur::cli {

std::vector<TrainBenchRow> bench_train(const agent::TrainConfig& config, int updates,
                                       const std::vector<std::string>& modes) {
  RECUR_CHECK(updates >= 1, "--updates {}: time at least 1 update", updates);
  std::vector<TrainBenchRow> rows;
  for (const auto& mode : modes) {
    RECUR_CHECK(mode == "sync" || mode == "async", "--modes: '{}' is not sync or async", mode);
    agent::TrainConfig c = config;
    c.algo.async = mode == "async";
    // Long enough that no update is the last (the async pipeline collects one rollout ahead);
    // the LR schedule sees the same horizon in both modes.
    const int64_t per_update = static_cast<int64_t>(c.env.num_envs) * c.algo.rollout_steps;
    c.run.total_env_steps = std::max(c.run.total_env_steps, per_update * (updates + 3));
    agent::Trainer trainer(c);
    const auto warm = trainer.iterate(nullptr);  // first-touch allocations, the pipeline's fill
    TrainBenchRow row;
    row.mode = mode;
    row.updates = updates;
    const auto t0 = std::chrono::steady_clock::now();
    int64_t steps = warm.env_steps;
    for (int i = 0; i < updates; ++i) {
      const auto it = trainer.iterate(nullptr);
      row.env_steps += it.env_steps - steps;
      steps = it.env_steps;
      row.act_s += it.act_seconds;
      row.learn_s += it.learn_seconds;
      row.wait_s += it.wait_seconds;
      row.lag_mean += it.policy_lag;
      row.lag_max = std::max(row.lag_max, it.policy_lag);
    }
    row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    row.lag_mean /= updates;
    rows.push_back(row);
  }
  return rows;
}

}  // namespace recur::cli
