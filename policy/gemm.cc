#include "policy/gemm.h"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "core/error.h"
#include "policy/eigen.h"

#if RECUR_WITH_XSMM
#include <libxsmm.h>
#endif

namespace recur::policy {
namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMatrixMap = Eigen::Map<const RowMatrix>;
using MatrixMap = Eigen::Map<RowMatrix>;

// op_a (m, k), op_b (k, n): Eigen expressions with direct access (maps or their transposes).
template <class OpA, class OpB>
void tiled_accumulate(const OpA& op_a, const OpB& op_b, MatrixMap c) {
  const Eigen::Index m = c.rows(), n = c.cols(), k = op_a.cols();
  // Eigen packs at most (tile_k x tile_m) of A and (tile_k x tile_n) of B per call.
  const Eigen::Index tile_k = std::min<Eigen::Index>(k, kGemmMaxDepthTile);
  const Eigen::Index tile_m = std::min<Eigen::Index>(m, kGemmMaxPanel / tile_k);
  const Eigen::Index tile_n = std::min<Eigen::Index>(n, kGemmMaxPanel / tile_k);
  for (Eigen::Index i = 0; i < m; i += tile_m) {
    const Eigen::Index mi = std::min(tile_m, m - i);
    for (Eigen::Index j = 0; j < n; j += tile_n) {
      const Eigen::Index nj = std::min(tile_n, n - j);
      for (Eigen::Index p = 0; p < k; p += tile_k) {
        const Eigen::Index kp = std::min(tile_k, k - p);
        c.block(i, j, mi, nj).noalias() += op_a.block(i, p, mi, kp) * op_b.block(p, j, kp, nj);
      }
    }
  }
}

#if RECUR_WITH_XSMM
// LIBXSMM multiplies column-major: C' (M, N) = A' (M, K) op(B') (K, N) [+ C']. Row-major C (m, n)
// is column-major C^T, and C^T = op(B)^T op(A)^T, so M = n, N = m, K = k, A' is b as stored and
// B' is a: a row-major (m, k) is column-major (k, m), B' itself; a stored (k, m) for trans_a is
// B' transposed, which LIBXSMM's generated kernels take (LIBXSMM_GEMM_FLAG_TRANS_B). They do not
// take A' transposed, so trans_b is not here: see xsmm_gemm_transposed_b. The dispatch looks the
// shape up in LIBXSMM's registry (~14 ns) and generates the kernel on the shape's first call; it
// returns null where LIBXSMM has no kernel (a CPU it cannot generate code for), and the caller
// then uses Eigen. b_stride and c_stride are the row strides of b (k, n) and c (m, n).
bool xsmm_gemm(int m, int n, int k, const float* a, bool trans_a, const float* b, int b_stride,
               float* c, int c_stride, bool accumulate) {
  const libxsmm_blasint mm = n, nn = m, kk = k;  // LIBXSMM's M, N, K
  const libxsmm_blasint lda = b_stride, ldb = trans_a ? m : k, ldc = c_stride;
  const float alpha = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  const int flags = trans_a ? LIBXSMM_GEMM_FLAG_TRANS_B : LIBXSMM_GEMM_FLAG_NONE;
  // No prefetch variant: a null strategy means LIBXSMM's default (automatic), whose kernels take
  // three more pointers (the next operands to prefetch) that this call does not pass.
  const int prefetch = LIBXSMM_GEMM_PREFETCH_NONE;
  const libxsmm_smmfunction kernel =
      libxsmm_smmdispatch(mm, nn, kk, &lda, &ldb, &ldc, &alpha, &beta, &flags, &prefetch);
  if (kernel == nullptr) return false;
  kernel(b, a, c);
  return true;
}

// A^T B of a large depth k is cut into slices of depth, one kernel call each, accumulating: a
// weight gradient, dW (m, n) = dA^T X over all T*B rows of a sequence, has k = T*B, and LIBXSMM's
// kernel runs over all of k in one register-blocked loop without cache blocking. An LSTM-256's
// dW_hh at T 128, B 128 (m 1024, n 256, k 16384) ran at 12-15 GFLOP/s on one core of the 2-core
// Xeon, where slices of 32 rows run at 90-99: the weight gradients were most of that layer's
// 1.0 s forward + backward, now 0.48 s (docs/PERFORMANCE.md, "Weight gradients in depth slices";
// tools/bench/gemm_depth_time.cc). A slice's panels of A and B, depth x (m + n) floats, are sized
// to ~160 KiB, which measured best from m + n = 320 (depth 128) to 1280 (depth 32); products whose
// whole A and B take less than 1 MiB are not cut (there slicing measured level to 0.9x).
constexpr int64_t kSlicePanelFloats = 40960;
constexpr int64_t kSliceFromFloats = 262144;
int depth_slice(int m, int n, int k) {
  const int64_t width = static_cast<int64_t>(m) + n;
  if (width * k <= kSliceFromFloats) return k;
  const int64_t slice = std::clamp<int64_t>(kSlicePanelFloats / width / 16 * 16, 16, 256);
  return static_cast<int>(std::min<int64_t>(slice, k));
}

// C (m, n) [+]= A (m, k) B^T with b stored (n, k): B^T is copied, kGemmMaxPanel floats at a time
// (a (k, tile) block of columns of C, on the stack as Eigen's packing is), and each block is one
// NN product. The copy pays from 64 rows (an MLP layer's forward, 64-128 wide: 1.0-1.45x Eigen
// at 64-4096 rows); below, it costs more than Eigen's packing saves (0.46-0.86x at 1-16 rows).
constexpr int kTransposedCopyMinRows = 64;
bool xsmm_gemm_transposed_b(int m, int n, int k, const float* a, const float* b, float* c,
                            bool accumulate) {
  if (m < kTransposedCopyMinRows) return false;
  const int tile = std::min(n, kGemmMaxPanel / k);
  if (tile < 16) return false;  // depth over 2048: not worth a copy this narrow
  alignas(64) float bt[kGemmMaxPanel];
  for (int j0 = 0; j0 < n; j0 += tile) {
    const int nt = std::min(tile, n - j0);
    Eigen::Map<RowMatrix>(bt, k, nt) =
        ConstMatrixMap(b + static_cast<size_t>(j0) * k, nt, k).transpose();
    if (xsmm_gemm(m, nt, k, a, false, bt, nt, c + j0, n, accumulate)) continue;
    // No kernel for this block's shape (LIBXSMM declined it): Eigen on this block alone, since
    // the blocks before it are done and must not be summed twice.
    Eigen::Map<RowMatrix, 0, Eigen::OuterStride<>> block(c + j0, m, nt, Eigen::OuterStride<>(n));
    if (!accumulate) block.setZero();
    block.noalias() += ConstMatrixMap(a, m, k) * ConstMatrixMap(bt, k, nt);
  }
  return true;
}
#endif

}  // namespace

void gemm(int m, int n, int k, std::span<const float> a, Transpose trans_a,
          std::span<const float> b, Transpose trans_b, std::span<float> c, bool accumulate) {
  RECUR_CHECK_ARG(m >= 0 && n >= 0 && k >= 0, "gemm: negative shape ({}, {}, {})", m, n, k);
  const auto sm = static_cast<size_t>(m), sn = static_cast<size_t>(n), sk = static_cast<size_t>(k);
  RECUR_CHECK_ARG(a.size() == sm * sk && b.size() == sk * sn && c.size() == sm * sn,
                  "gemm: buffer sizes a {} b {} c {} do not match m {} n {} k {}", a.size(),
                  b.size(), c.size(), m, n, k);
  MatrixMap cm(c.data(), m, n);
  const bool ta = trans_a == Transpose::kYes, tb = trans_b == Transpose::kYes;
#if RECUR_WITH_XSMM
  // One row is a matrix-vector product, which Eigen runs as one (no packing): 1.07-1.11x
  // LIBXSMM's kernel for a (1, H) x (H, 4H) step at H 64-128.
  if (m > 1 && n > 0 && k > 0) {
    if (!tb) {
      // A^T B in depth slices (depth_slice), A B whole: slice p reads rows [p, p + depth) of the
      // stored a (k, m) and of b (k, n).
      const int depth = ta ? depth_slice(m, n, k) : k;
      int p = 0;
      for (; p < k; p += depth) {
        const int kp = std::min(depth, k - p);
        const float* ap = a.data() + static_cast<size_t>(p) * (ta ? sm : 1);
        if (!xsmm_gemm(m, n, kp, ap, ta, b.data() + static_cast<size_t>(p) * sn, n, c.data(), n,
                       accumulate || p > 0))
          break;
      }
      if (p >= k) return;
      if (p > 0) {  // a later slice's shape had no kernel: Eigen adds the rows left
        tiled_accumulate(
            ConstMatrixMap(a.data() + static_cast<size_t>(p) * sm, k - p, m).transpose(),
            ConstMatrixMap(b.data() + static_cast<size_t>(p) * sn, k - p, n), cm);
        return;
      }
    }
    if (tb && !ta && xsmm_gemm_transposed_b(m, n, k, a.data(), b.data(), c.data(), accumulate))
      return;
  }
#endif
  if (!accumulate) cm.setZero();
  if (m == 0 || n == 0 || k == 0) return;
  const ConstMatrixMap am(a.data(), ta ? k : m, ta ? m : k);
  const ConstMatrixMap bm(b.data(), tb ? n : k, tb ? k : n);
  if (!ta && !tb) tiled_accumulate(am, bm, cm);
  if (!ta && tb) tiled_accumulate(am, bm.transpose(), cm);
  if (ta && !tb) tiled_accumulate(am.transpose(), bm, cm);
  if (ta && tb) tiled_accumulate(am.transpose(), bm.transpose(), cm);
}

std::string gemm_backend() {
#if RECUR_WITH_XSMM
  return fmt::format("LIBXSMM {}.{} (JIT for {})", LIBXSMM_VERSION_MAJOR, LIBXSMM_VERSION_MINOR,
                     libxsmm_get_target_arch());
#else
  return fmt::format("Eigen {}.{}.{}", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION,
                     EIGEN_MINOR_VERSION);
#endif
}

}  // namespace recur::policy
