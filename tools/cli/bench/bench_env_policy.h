// `recur bench envs --policy RUN`: what an env step costs in the states a trained policy reaches,
// beside random actions. `bench envs` and `bench train` step envs from their first episodes, but
// a trained policy goes elsewhere: a LunarLander lander that hovers or rests on its legs costs
// Box2D more per step than one that falls (docs/PERFORMANCE.md, "The fast config's training below
// `bench train`'s rate"). One thread steps a VectorEnv of the run's env (id and options from the
// checkpoint) twice from the same reset seed: actions sampled by the checkpoint's policy on the
// CPU, as in training, then uniformly from the action space. Only the time inside step() is the
// env's; the policy's act is timed apart.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace recur::cli {

struct EnvPolicyBenchConfig {
  std::string target;      // a run directory or a checkpoint (agent/policy_target.h)
  int num_envs = 64;       // envs in the VectorEnv, one thread
  int64_t steps = 256000;  // env steps per mode (a multiple of num_envs, rounded up)
  uint64_t seed = 1;       // the envs' reset seed and the actions' stream
};

struct EnvPolicyBenchRow {
  std::string actions;         // "policy" or "random"
  double env_us_per_step = 0;  // inside VectorEnv::step, per env step
  double act_us_per_step = 0;  // the policy's act per env step (0 for random actions)
  int64_t episodes = 0;        // finished while timed
  double mean_length = 0;      // env steps per finished episode (steps / episodes)
};

struct EnvPolicyBench {
  std::string env_id;
  std::vector<EnvPolicyBenchRow> rows;  // policy, then random
};

// Throws recur::Error when the target does not load, records no env, or its policy does not fit
// the env's spaces.
EnvPolicyBench bench_env_policy(const EnvPolicyBenchConfig& config);
// The table `recur bench envs --policy` prints.
std::string format_env_policy(const EnvPolicyBench& bench, const EnvPolicyBenchConfig& config);

}  // namespace recur::cli
