#include "policy/gemm.h"

#include <algorithm>

#include "core/error.h"
#include "policy/eigen.h"

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

}  // namespace

void gemm(int m, int n, int k, std::span<const float> a, Transpose trans_a,
          std::span<const float> b, Transpose trans_b, std::span<float> c, bool accumulate) {
  RECUR_CHECK_ARG(m >= 0 && n >= 0 && k >= 0, "gemm: negative shape ({}, {}, {})", m, n, k);
  const auto sm = static_cast<size_t>(m), sn = static_cast<size_t>(n), sk = static_cast<size_t>(k);
  RECUR_CHECK_ARG(a.size() == sm * sk && b.size() == sk * sn && c.size() == sm * sn,
                  "gemm: buffer sizes a {} b {} c {} do not match m {} n {} k {}", a.size(),
                  b.size(), c.size(), m, n, k);
  MatrixMap cm(c.data(), m, n);
  if (!accumulate) cm.setZero();
  if (m == 0 || n == 0 || k == 0) return;
  const bool ta = trans_a == Transpose::kYes, tb = trans_b == Transpose::kYes;
  const ConstMatrixMap am(a.data(), ta ? k : m, ta ? m : k);
  const ConstMatrixMap bm(b.data(), tb ? n : k, tb ? k : n);
  if (!ta && !tb) tiled_accumulate(am, bm, cm);
  if (!ta && tb) tiled_accumulate(am, bm.transpose(), cm);
  if (ta && !tb) tiled_accumulate(am.transpose(), bm, cm);
  if (ta && tb) tiled_accumulate(am.transpose(), bm.transpose(), cm);
}

}  // namespace recur::policy
