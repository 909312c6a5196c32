// What the benchmarks share: wall-clock timing of a synchronous call (every GPU executor call
// waits for its stream, so wall clock is the caller's truth) and random inputs (never zeros).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/rng.h"

namespace recur::cli {

// Seconds per call of fn: one warm-up call (first touch, lazy loading), then repeated until
// min_seconds have passed; the median of 3 such chunks.
inline double time_per_call(double min_seconds, const std::function<void()>& fn) {
  using Clock = std::chrono::steady_clock;
  fn();
  std::vector<double> chunks;
  for (int c = 0; c < 3; ++c) {
    int64_t calls = 0;
    const auto t0 = Clock::now();
    double elapsed = 0;
    do {
      fn();
      ++calls;
      elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
    } while (elapsed < min_seconds / 3);
    chunks.push_back(elapsed / static_cast<double>(calls));
  }
  std::sort(chunks.begin(), chunks.end());
  return chunks[1];
}

// n values ~ U(-1, 1).
inline std::vector<float> random_vec(size_t n, Rng& rng) {
  std::vector<float> v(n);
  for (auto& e : v) e = static_cast<float>(rng.uniform(-1, 1));
  return v;
}

// n episode-start flags, each set with probability `rate` (0: none, and no draw at all), from a
// generator of their own: a bench's other random inputs stay the same whatever the rate.
// Positions are timestep-major (t * B + b), as the sequence executors read them; a start at t = 0
// replaces the initial state by zeros, as anywhere else.
inline std::vector<uint8_t> episode_starts(size_t n, double rate) {
  std::vector<uint8_t> starts(n, 0);
  if (rate <= 0) return starts;
  Rng rng(0x5eed);
  for (auto& s : starts) s = rng.uniform() < rate ? 1 : 0;
  return starts;
}

}  // namespace recur::cli
