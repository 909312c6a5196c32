#include "tools/cli/bench/bench_train.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "agent/algorithm.h"
#include "agent/run/init_from.h"
#include "core/error.h"
#include "policy/device_choice.h"
#include "policy/devices.h"

namespace recur::cli {

namespace {

// "actor/learner" -> the config with those devices; the config's own devices for "".
agent::TrainConfig with_devices(const agent::TrainConfig& config, const std::string& pair) {
  agent::TrainConfig c = config;
  if (pair.empty()) return c;
  const auto slash = pair.find('/');
  RECUR_CHECK(slash != std::string::npos && pair.find('/', slash + 1) == std::string::npos,
              "--devices: '{}' is not ACTOR/LEARNER (e.g. cuda/cuda or cpu/cuda)", pair);
  c.device.actor = pair.substr(0, slash);
  c.device.learner = pair.substr(slash + 1);
  for (const std::string* d : {&c.device.actor, &c.device.learner})
    RECUR_CHECK(*d == "cpu" || *d == "cuda" || *d == "auto",
                "--devices: '{}' in '{}' is not cpu, cuda or auto", *d, pair);
  return c;
}

}  // namespace

std::vector<TrainBenchRow> bench_train(const agent::TrainConfig& config, int updates,
                                       const std::vector<std::string>& modes,
                                       const std::vector<std::string>& devices) {
  RECUR_CHECK(updates >= 1, "--updates {}: time at least 1 update", updates);
  const bool ppo = config.algo.type == "ppo";
  for (const auto& mode : modes) {
    RECUR_CHECK(mode == "sync" || mode == "async", "--modes: '{}' is not sync or async", mode);
    RECUR_CHECK(ppo || mode == "sync",
                "--modes {}: algo.type = {} has no async mode (its replay learner runs "
                "synchronously); time it with --modes sync",
                mode, config.algo.type);
  }
  std::vector<std::string> pairs = devices;
  if (pairs.empty()) pairs.push_back("");
  // Every error before any training: a malformed pair, or cuda where no GPU is usable, would
  // otherwise surface after minutes of measuring the pairs before it.
  const policy::DeviceReport report = policy::query_devices();
  for (const auto& pair : pairs) {
    const agent::TrainConfig c = with_devices(config, pair);
    policy::resolve_device("device.actor", c.device.actor, report);
    policy::resolve_device("device.learner", c.device.learner, report);
  }
  // Env steps per iteration: PPO's rollout; SAC/TD3's offpolicy.steps_per_iteration, which
  // iterate() rounds up to whole vector steps.
  const int64_t n = config.env.num_envs;
  const int64_t per_update =
      ppo ? n * config.algo.rollout_steps : (config.offpolicy.steps_per_iteration + n - 1) / n * n;
  // SAC/TD3 act before they train: the warm-up collects offpolicy.learning_starts, then runs one
  // training iteration (first-touch allocations), so every timed iteration trains.
  const int64_t warm_steps = ppo ? 0 : config.offpolicy.learning_starts;
  std::vector<TrainBenchRow> rows;
  for (const auto& pair : pairs)
    for (const auto& mode : modes) {
      agent::TrainConfig c = with_devices(config, pair);
      c.algo.async = mode == "async";
      // Long enough that no update is the last (the async pipeline collects one rollout ahead);
      // the LR schedule sees the same horizon in both modes.
      c.run.total_env_steps =
          std::max(c.run.total_env_steps, warm_steps + per_update * (updates + 3));
      const auto algo = agent::make_algorithm(c);
      agent::start_from_policy(c, *algo);  // run.init_from: a trained policy's episodes
      agent::Iteration warm;
      do {
        warm = algo->iterate(nullptr);  // first-touch allocations, the pipeline's fill
      } while (warm.env_steps < warm_steps);
      if (warm_steps > 0) warm = algo->iterate(nullptr);
      TrainBenchRow row;
      row.devices = fmt::format("{}/{}", policy::to_string(algo->actor_device()),
                                policy::to_string(algo->learner_device()));
      row.mode = mode;
      row.updates = updates;
      const auto t0 = std::chrono::steady_clock::now();
      int64_t steps = warm.env_steps, version = warm.policy_version;
      for (int i = 0; i < updates; ++i) {
        const auto it = algo->iterate(nullptr);
        row.env_steps += it.env_steps - steps;
        steps = it.env_steps;
        row.learner_updates += it.policy_version - version;
        version = it.policy_version;
        row.act_s += it.act_seconds;
        row.learn_s += it.learn_seconds;
        row.wait_s += it.wait_seconds;
        row.episodes += it.episodes;
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
