// The env-stepping benchmark behind `recur bench envs`: steps/s of each env on one thread, and
// the cost of the VectorEnv layer against a bare loop over the same envs (same actions, same
// autoreset). Actions are drawn before timing, so the policy's cost is not in the figures.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace recur::cli {

struct EnvBenchConfig {
  std::vector<std::string> ids;  // empty: every registered env
  int64_t steps = 2'000'000;     // env steps per timed repetition
  int num_envs = 16;             // envs in the vector comparison
  int repeats = 5;               // timed repetitions; the median is reported
  int threads = 1;               // VectorEnv threads for an extra threaded row (1 = none)
};

struct EnvBenchRow {
  std::string id;
  double single_steps_per_s = 0;    // one Env, bare loop with reset on done
  double bare_steps_per_s = 0;      // num_envs Envs, bare loop
  double vector_steps_per_s = 0;    // VectorEnv over num_envs envs, one thread
  double threaded_steps_per_s = 0;  // VectorEnv with `threads` threads (0 when not run)
  double vector_overhead() const { return bare_steps_per_s / vector_steps_per_s - 1.0; }
};

std::vector<EnvBenchRow> bench_envs(const EnvBenchConfig& config);

}  // namespace recur::cli
