#include "tools/cli/bench/bench_rnn.h"

#include <algorithm>
#include <chrono>
#include <functional>

#include "core/rng.h"
#include "policy/cpu/cpu_sequence_executor.h"
#include "policy/cpu/cpu_step_executor.h"
#include "policy/eigen.h"
#include "policy/gemm.h"
#include "policy/reference_core.h"
#include "tools/cli/bench/bench_timing.h"

namespace recur::cli {
namespace {

using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
}  // namespace

std::vector<RnnBenchRow> bench_rnn(const RnnBenchConfig& config) {
  std::vector<RnnBenchRow> rows;
  Rng rng(1);
  for (int H : config.hidden) {
    const policy::CoreSpec spec{config.cell, config.input, H, config.layers, 0};
    spec.validate();
    const auto weights = policy::CanonicalWeights::random(spec, rng);
    const int G = spec.gates();
    const int columns = config.cell == policy::CellType::kGru ? 4 * H : G * H;
    // Rows of the h part of the GEMM: H, or 0 for minGRU (its gates read x alone).
    const int h_rows = policy::has_recurrent_weights(config.cell) ? H : 0;
    // GEMM FLOPs per timestep-sample, all layers: 2 (in_k + H) G H (the true count; the GRU
    // step executor's extra zero block is not counted as useful work; minGRU: 2 in_k G H).
    double flops_per_sample = 0;
    for (int k = 0; k < spec.layers; ++k)
      flops_per_sample += 2.0 * (spec.layer_input(k) + h_rows) * G * H;

    for (int B : config.batch) {
      // Roofline: GEMMs of the step executor's shapes, one per layer, (B, in_k + H) x
      // (in_k + H, C), their times added: layer 0's input width is not the others' (H), and a
      // narrow input runs far below the machine's GEMM rate, so layer 0's shape alone would
      // understate the rate a deeper stack can reach. Layers k >= 1 share a shape: timed once.
      // Two GEMMs are timed: policy::gemm (what the executors call: LIBXSMM where built) and
      // Eigen's; the roofline is the faster, so a row's fraction is against the best product of
      // its shape that this machine ran.
      double gemm_s = 0, eigen_s = 0, gemm_flops = 0;
      for (int k = 0; k < std::min(spec.layers, 2); ++k) {
        const int width = spec.layer_input(k) + h_rows;
        const int copies = k == 0 ? 1 : spec.layers - 1;
        Mat a = Mat::Random(B, width), w = Mat::Random(width, columns), out(B, columns);
        const auto sa = static_cast<size_t>(a.size()), sw = static_cast<size_t>(w.size()),
                   so = static_cast<size_t>(out.size());
        gemm_s += copies * time_per_call(config.min_seconds, [&] {
                    policy::gemm(B, columns, width, {a.data(), sa}, policy::Transpose::kNo,
                                 {w.data(), sw}, policy::Transpose::kNo, {out.data(), so}, false);
                  });
        eigen_s += copies * time_per_call(config.min_seconds, [&] { out.noalias() = a * w; });
        gemm_flops += copies * 2.0 * B * width * columns;
      }
      const double best_s = std::min(gemm_s, eigen_s);
      const double gemm_gflops = gemm_flops / best_s / 1e9;
      rows.push_back(
          {"gemm", B, H, 1, gemm_s * 1e6, B / gemm_s, gemm_flops / gemm_s / 1e9, best_s / gemm_s});
      rows.push_back({"gemm-eigen", B, H, 1, eigen_s * 1e6, B / eigen_s, gemm_flops / eigen_s / 1e9,
                      best_s / eigen_s});

      policy::CpuStepExecutor step(spec, B);
      step.load(weights);
      const auto x = random_vec(static_cast<size_t>(B) * config.input, rng);
      std::vector<uint8_t> starts(static_cast<size_t>(B), 0);
      std::vector<float> h(static_cast<size_t>(B) * H);
      const double step_s = time_per_call(config.min_seconds, [&] { step.step(x, starts, h); });
      const double step_gflops = flops_per_sample * B / step_s / 1e9;
      rows.push_back(
          {"step", B, H, 1, step_s * 1e6, B / step_s, step_gflops, step_gflops / gemm_gflops});

      if (config.vanilla) {
        policy::ReferenceCore<float> ref(weights);
        std::vector<float> state(static_cast<size_t>(B) * spec.state_size(), 0.0f);
        const double van_s = time_per_call(config.min_seconds, [&] {
          ref.step(B, x.data(), starts.data(), state.data(), h.data());
        });
        const double van_gflops = flops_per_sample * B / van_s / 1e9;
        rows.push_back(
            {"vanilla", B, H, 1, van_s * 1e6, B / van_s, van_gflops, van_gflops / gemm_gflops});
      }

      for (int T : config.seq_len) {
        policy::CpuSequenceExecutor seq(spec);
        seq.load(weights);
        const auto tb = static_cast<size_t>(T) * B;
        const auto xs = random_vec(tb * config.input, rng);
        const auto s0 = random_vec(static_cast<size_t>(B) * spec.state_size(), rng);
        const auto seq_starts = episode_starts(tb, config.start_rate);
        std::vector<float> y(tb * H), dx(tb * config.input), ds(s0.size());
        const auto dy = random_vec(tb * H, rng);
        const double fwd_s =
            time_per_call(config.min_seconds, [&] { seq.forward(T, B, xs, seq_starts, s0, y); });
        const double fwd_gflops = flops_per_sample * static_cast<double>(tb) / fwd_s / 1e9;
        rows.push_back({"seq-fwd", B, H, T, fwd_s * 1e6, static_cast<double>(tb) / fwd_s,
                        fwd_gflops, fwd_gflops / gemm_gflops});
        const double both_s = time_per_call(config.min_seconds, [&] {
          seq.forward(T, B, xs, seq_starts, s0, y);
          seq.backward(dy, dx, ds);
        });
        // Backward does two GEMMs per forward GEMM (input and weight gradients): 3x the FLOPs.
        const double both_gflops = 3 * flops_per_sample * static_cast<double>(tb) / both_s / 1e9;
        rows.push_back({"seq-fwd+bwd", B, H, T, both_s * 1e6, static_cast<double>(tb) / both_s,
                        both_gflops, both_gflops / gemm_gflops});
      }
    }
  }
  return rows;
}

}  // namespace recur::cli
