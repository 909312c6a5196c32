// Buffers that Eigen maps are allocated 64-byte aligned. Why: Eigen's vectorized reductions and
// matrix-vector products peel scalar iterations until the data is aligned, so the summation order
// (and the last bits of the result) depends on the buffer's address modulo the vector width.
// With malloc's 16-byte alignment, two identical trainings in one process could differ; aligned
// buffers make results depend on values only.
#pragma once

#include <vector>

#include "policy/eigen.h"

namespace recur::policy {

template <typename T>
using AlignedVector = std::vector<T, Eigen::aligned_allocator<T>>;

}  // namespace recur::policy
