// Dense float32 matrix products for the CPU paths of the policy: C (m, n) [+]= op(A) op(B), all
// row-major and contiguous, where op(X) is X or its transpose.
//
// Why not a plain Eigen `C.noalias() += A * B`: Eigen's GEMM packs panels of A and B into
// buffers that it puts on the stack up to EIGEN_STACK_ALLOCATION_LIMIT (128 KiB) and takes from
// the heap above it, so a large product would allocate on every call. Here the product runs as
// Eigen GEMMs on tiles of depth at most kGemmMaxDepthTile whose A and B panels hold at most
// kGemmMaxPanel floats each (exactly 128 KiB), so nothing is heap-allocated, whatever the shapes.
#pragma once

#include <span>

namespace recur::policy {

inline constexpr int kGemmMaxDepthTile = 128;
inline constexpr int kGemmMaxPanel = 32768;  // floats: 128 KiB

enum class Transpose { kNo, kYes };

// op(A) (m, k) and op(B) (k, n): a holds A as stored, (m, k) for kNo or (k, m) for kYes; the same
// for b. accumulate: C += op(A) op(B); otherwise C = op(A) op(B). k = 0 gives C (= or +=) 0.
void gemm(int m, int n, int k, std::span<const float> a, Transpose trans_a,
          std::span<const float> b, Transpose trans_b, std::span<float> c, bool accumulate);

}  // namespace recur::policy
