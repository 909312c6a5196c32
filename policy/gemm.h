// Dense float32 matrix products for the CPU paths of the policy: C (m, n) [+]= op(A) op(B), all
// row-major and contiguous, where op(X) is X or its transpose.
//
// Where the build has LIBXSMM (cmake/RecurXsmm.cmake), a product runs as LIBXSMM's kernel
// generated for its shape: the first call of a shape generates it (LIBXSMM keeps it for the
// process, shared by all threads), and later calls look it up (~14 ns) and multiply without
// packing either operand. recur's products are small or thin (a step's (B, H) x (H, 4H) at
// B 1-64; T*B rows against 8-128 inputs), and there that was 1.4-3.5x Eigen's GEMM on this
// project's CPU (docs/PERFORMANCE.md, "Small products through LIBXSMM"). op(B) = B^T is copied
// transposed first, in blocks on the stack, since LIBXSMM's kernels do not read that operand
// transposed; that pays from 64 rows. An A^T B of a large depth k (a weight gradient over a
// sequence's T*B rows) runs as slices of k, one kernel call each, since LIBXSMM's kernels do not
// block for the cache (policy/gemm.cc, depth_slice). One row (a matrix-vector product), B^T
// below 64 rows, A^T with B^T, or a CPU that LIBXSMM cannot generate code for go to Eigen.
//
// Eigen's GEMM packs panels of A and B into buffers that it puts on the stack up to
// EIGEN_STACK_ALLOCATION_LIMIT (128 KiB) and takes from the heap above it, so a large product
// would allocate on every call. Here Eigen runs on tiles of depth at most kGemmMaxDepthTile whose
// A and B panels hold at most kGemmMaxPanel floats each (exactly 128 KiB), so nothing is
// heap-allocated, whatever the shapes.
#pragma once

#include <span>
#include <string>

namespace recur::policy {

inline constexpr int kGemmMaxDepthTile = 128;
inline constexpr int kGemmMaxPanel = 32768;  // floats: 128 KiB

enum class Transpose { kNo, kYes };

// op(A) (m, k) and op(B) (k, n): a holds A as stored, (m, k) for kNo or (k, m) for kYes; the same
// for b. accumulate: C += op(A) op(B); otherwise C = op(A) op(B). k = 0 gives C (= or +=) 0.
void gemm(int m, int n, int k, std::span<const float> a, Transpose trans_a,
          std::span<const float> b, Transpose trans_b, std::span<float> c, bool accumulate);

// What runs the products in this process: "LIBXSMM 1.17 (JIT for cpx)", with the instruction set
// LIBXSMM generates for, or "Eigen 3.4.0" in a build without LIBXSMM. Benchmarks print it.
std::string gemm_backend();

}  // namespace recur::policy
