// `recur bench rnn`: step vs sequence execution of the recurrent core on this machine, with the
// roofline measured in the same run (the faster of policy::gemm and Eigen on the executor's GEMM
// shapes, one per layer)
// and the vanilla op-by-op cell as the baseline. See docs/PERFORMANCE.md for how to read the table.
#pragma once

#include <string>
#include <vector>

#include "policy/core_spec.h"

namespace recur::cli {

struct RnnBenchConfig {
  policy::CellType cell = policy::CellType::kLstm;
  int input = 8;
  int layers = 1;
  std::vector<int> batch = {1, 16, 64, 256};
  std::vector<int> hidden = {64, 128, 256};
  std::vector<int> seq_len = {32, 128};
  double min_seconds = 0.2;  // per timed measurement
  // Fraction of the sequence rows' timesteps that start an episode (resets inside the sequence,
  // as a learner's minibatch has them; 0.03 is TorchRL's RNN benchmark's rate). 0: none.
  double start_rate = 0;
  bool vanilla = true;
};

struct RnnBenchRow {
  std::string mode;  // "step", "vanilla", "seq-fwd", "seq-fwd+bwd", "gemm", "gemm-eigen"
  int batch = 0, hidden = 0, seq_len = 0;
  double us_per_call = 0;        // one step, or one whole (T, B) sequence
  double samples_per_s = 0;      // timestep-samples per second
  double gflops = 0;             // GEMM FLOPs only (2 m n k per product)
  double roofline_fraction = 0;  // gflops / the GEMM roofline of the same shapes
};

std::vector<RnnBenchRow> bench_rnn(const RnnBenchConfig& config);

}  // namespace recur::cli
