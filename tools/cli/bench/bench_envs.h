// The env-stepping benchmark behind `recur bench envs`: steps/s of each env on one thread, the
// cost of the VectorEnv layer against a bare loop over the same envs (same actions, same
// autoreset), and how VectorEnv stepping scales with threads under the static and the dynamic
// schedule. Actions are drawn before timing, so the policy's cost is not in the figures.
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
  // Thread counts of the scaling table (1 is always measured: the efficiency baseline); only {1}:
  // no scaling table.
  std::vector<int> threads = {1};
  int chunks_per_thread = 4;  // of the dynamic schedule (VectorEnv::set_schedule)
  // A policy act simulated between two steps (a busy wait on the calling thread), so the pool's
  // workers must bridge a gap as in training; only the time inside step() is counted.
  int act_us = 0;
  int spin_us = -1;  // the pool's WaitBudget spin and yield, each (-1: WorkerPool's default)
  // The double-buffering table (env.groups): at each thread count, a collection loop whose act
  // is a busy wait of act_us on the calling thread per act call (a GPU act: its latency, not its
  // rows, sets its time, and the waiting thread steps no env), with the envs in one group
  // (act, then step all) and in two (act on one half while the workers step the other).
  bool groups = false;
};

struct EnvGroupsRow {
  int threads = 1;
  double one_group_steps_per_s = 0;   // act + step, wall time of the whole loop
  double two_groups_steps_per_s = 0;  // the double-buffered loop, wall time
};

struct EnvScalingRow {
  int threads = 1;
  double static_steps_per_s = 0;   // one contiguous slice per thread
  double dynamic_steps_per_s = 0;  // chunks claimed by free threads
};

struct EnvBenchRow {
  std::string id;
  double single_steps_per_s = 0;       // one Env, bare loop with reset on done
  double bare_steps_per_s = 0;         // num_envs Envs, bare loop
  double vector_steps_per_s = 0;       // VectorEnv over num_envs envs, one thread
  std::vector<EnvScalingRow> scaling;  // one per thread count, ascending; empty when not run
  std::vector<EnvGroupsRow> groups;    // EnvBenchConfig::groups: one per thread count
  double vector_overhead() const { return bare_steps_per_s / vector_steps_per_s - 1.0; }
  // (steps/s at k threads) / (k x steps/s at 1 thread). The 1-thread rate is the mean of the
  // scaling table's two 1-thread figures (the same single-threaded stepping, timed twice), so
  // that one noisy repetition moves the baseline less.
  double efficiency(const EnvScalingRow& r, double steps_per_s) const {
    const auto& one = scaling.front();
    return steps_per_s / (r.threads * 0.5 * (one.static_steps_per_s + one.dynamic_steps_per_s));
  }
};

std::vector<EnvBenchRow> bench_envs(const EnvBenchConfig& config);

}  // namespace recur::cli
