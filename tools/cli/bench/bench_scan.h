// `recur bench scan`: minGRU's linear scan on the CPU, the sequential scan of the sequence engine
// (policy/cpu/sequence_engine.h: one pass over T, each step vectorized over its B x H lanes, the
// lanes split across threads) against a chunked parallel scan (parallel in T, the two-level scheme
// of kernels/mingru_scan_math.h with the work of a chunk vectorized over all lanes: each thread
// folds its chunk of time into one affine map per lane, the maps are composed in order, each
// chunk re-runs from its carry), forward and backward, at the same shapes and thread counts.
// It answers issue 37's "does a parallel or a sequential scan win on this CPU" by measurement, and
// checks that the two scans agree (h, the gate gradients, the initial state's gradient).
#pragma once

#include <vector>

namespace recur::cli {

struct ScanBenchConfig {
  std::vector<int> batch = {1, 16, 64};
  std::vector<int> hidden = {64, 128};
  std::vector<int> seq_len = {32, 256, 1024};
  std::vector<int> threads = {1, 2};
  double min_seconds = 0.2;  // per timed measurement
};

struct ScanBenchRow {
  int batch = 0, hidden = 0, seq_len = 0, threads = 0;
  double sequential_us = 0;  // forward + backward of one (T, B, H) layer's scan
  double chunked_us = 0;
  double max_abs_diff = 0;  // between the two scans' h, gate gradients and dh0
  double chunked_over_sequential() const { return chunked_us / sequential_us; }
};

// Throws recur::InternalError when the two scans disagree by more than float rounding (1e-4).
std::vector<ScanBenchRow> bench_scan(const ScanBenchConfig& config);

}  // namespace recur::cli
