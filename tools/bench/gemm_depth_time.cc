// policy::gemm's A^T B (a weight gradient, dW (m, n) += dA^T X over k rows) timed whole and cut
// by the caller into depth slices of 32 to 512 rows: the sweep behind policy/gemm.cc's
// depth_slice and docs/PERFORMANCE.md, "Weight gradients in depth slices". GFLOP/s, the best of
// 7 timed runs. A standalone program, built against a Release build's libraries:
//   g++ -O3 -march=native -std=c++20 -DNDEBUG -I. -I/usr/include/eigen3
//     tools/bench/gemm_depth_time.cc build/policy/librecur_policy.a build/core/librecur_core.a
//     /usr/lib/libxsmm.a /usr/lib/libxsmmnoblas.a -lfmt -lspdlog -ldl -lpthread -o /tmp/gemm_depth
//   /tmp/gemm_depth                  the shapes of the sweep
//   /tmp/gemm_depth M N K            one shape
// Against a library built before depth_slice (commit 792841c's parent), "whole" is LIBXSMM's one
// kernel over all of k; against a later one, "whole" is policy::gemm's own slicing, and a caller's
// slice is sliced again only where its own panels pass the 1 MiB threshold.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

#include "policy/gemm.h"

namespace {

using recur::policy::gemm;
using recur::policy::Transpose;

template <class F>
double best_seconds(int reps, F f) {
  double best = 1e30;
  for (int r = 0; r < 7; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) f();
    const std::chrono::duration<double> s = std::chrono::steady_clock::now() - t0;
    best = std::min(best, s.count() / reps);
  }
  return best;
}

void sweep(int m, int n, int k) {
  std::vector<float> a(static_cast<size_t>(k) * m, 0.5f), b(static_cast<size_t>(k) * n, 0.25f),
      c(static_cast<size_t>(m) * n, 0.0f);
  const double flops = 2.0 * m * n * k;
  const int reps = std::max(1, static_cast<int>(2e8 / flops));
  std::printf("m %5d n %4d k %6d: GFLOP/s", m, n, k);
  for (const int depth : {0, 32, 64, 128, 256, 512}) {
    const double s = best_seconds(reps, [&] {
      const int d = depth == 0 ? k : std::min(depth, k);
      for (int p = 0; p < k; p += d) {
        const int kp = std::min(d, k - p);
        gemm(m, n, kp,
             std::span<const float>(a.data() + static_cast<size_t>(p) * m,
                                    static_cast<size_t>(kp) * m),
             Transpose::kYes,
             std::span<const float>(b.data() + static_cast<size_t>(p) * n,
                                    static_cast<size_t>(kp) * n),
             Transpose::kNo, c, true);
      }
    });
    if (depth == 0)
      std::printf("  whole %6.1f", flops / s / 1e9);
    else
      std::printf("  %d: %6.1f", depth, flops / s / 1e9);
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4) {
    sweep(std::atoi(argv[1]), std::atoi(argv[2]), std::atoi(argv[3]));
    return 0;
  }
  // (4H, H) and (4H, in) gradients of LSTMs over T*B rows, from a step's minibatch to TorchRL's
  // benchmark shape (H 256, T 128 x B 128), and small products that are not sliced.
  const int shapes[][3] = {{1024, 256, 16384}, {1024, 64, 16384}, {512, 128, 8192},
                           {512, 128, 2048},   {512, 128, 512},   {256, 64, 4096},
                           {256, 64, 512},     {256, 8, 512},     {128, 64, 8192},
                           {64, 16, 16384},    {32, 8, 4096},     {2048, 512, 4096}};
  for (const auto& s : shapes) sweep(s[0], s[1], s[2]);
  return 0;
}
