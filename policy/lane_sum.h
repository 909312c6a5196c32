// lane_sum: a sum over a short or long range in vector lanes (below), for the CPU's reductions
// that must not be one chain of dependent additions.
#pragma once

#include <cstddef>

#include "policy/eigen.h"

namespace recur::policy {

// The sum over j < n of term(j), in kSumLanes independent accumulators (64 bytes: one AVX-512
// register, two AVX2 ones) folded at the end. A plain loop's sum is one chain of dependent
// additions, which the compiler may not reorder (no -ffast-math), and Eigen's reductions of a short
// dynamic row pay their setup per call. At H 64 the layer-norm LSTM makes ten such sums per row and
// step (docs/PERFORMANCE.md, "The layer-norm LSTM at large batches"); the CPU learner's global
// gradient norm is one over every parameter per minibatch. The lane loop is a fixed-count
// elementwise loop, which the compiler vectorizes.
template <typename S>
inline constexpr size_t kSumLanes = 64 / sizeof(S);

template <typename S, typename Term>
S lane_sum(size_t n, Term term) {
  constexpr size_t L = kSumLanes<S>;
  alignas(64) S acc[L] = {};
  size_t j = 0;
  for (; j + L <= n; j += L)
    for (size_t l = 0; l < L; ++l) acc[l] += term(j + l);
  // The lanes' own sum: Eigen's fixed-size reduction, in registers (log2(L) vector additions, not
  // a chain of L scalar ones).
  S sum = Eigen::Map<const Eigen::Array<S, L, 1>>(acc).sum();
  for (; j < n; ++j) sum += term(j);
  return sum;
}

}  // namespace recur::policy
