// The one-line console summary of a training job, printed after each update:
//
//   [ 45%] 45,056/100,000 steps | 12,345 fps | return 187.3 | elapsed 0:03 | ETA 0:04
//
// A pure function of its inputs, so it is unit-tested and the trainer only decides when to print.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace recur::agent {

struct ProgressInfo {
  int64_t env_steps = 0;              // steps done (all envs together)
  int64_t total_env_steps = 0;        // steps the run will do
  double fps = 0;                     // recent env steps per second; the ETA assumes it holds
  std::optional<double> return_mean;  // mean return of recent episodes; none before the first
  double elapsed_s = 0;               // wall time of the run so far, seconds
};

// The percentage is rounded down (100% only when done); times are M:SS, or H:MM:SS from an hour;
// the ETA is "?" while fps is 0.
std::string progress_line(const ProgressInfo& info);

// 1234567 -> "1,234,567" (exposed for tests).
std::string group_thousands(int64_t value);
// Seconds -> "M:SS" or "H:MM:SS", rounded to the nearest second (exposed for tests).
std::string format_duration(double seconds);

}  // namespace recur::agent
