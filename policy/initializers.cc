#include "policy/initializers.h"

#include "core/error.h"
#include "policy/eigen.h"  // before <Eigen/QR>: see there

#include <Eigen/QR>

namespace recur::policy {

void orthogonal_init(int rows, int cols, float gain, Rng& rng, std::span<float> w) {
  RECUR_CHECK_ARG(rows > 0 && cols > 0, "orthogonal_init: shape ({}, {}) must be positive", rows,
                  cols);
  RECUR_CHECK_ARG(w.size() == static_cast<size_t>(rows) * static_cast<size_t>(cols),
                  "orthogonal_init: buffer of {} floats for shape ({}, {})", w.size(), rows, cols);
  // Float64 QR so the result is orthonormal to float32 precision after rounding.
  using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Matrix flat(rows, cols);
  for (Eigen::Index i = 0; i < rows; ++i)
    for (Eigen::Index j = 0; j < cols; ++j) flat(i, j) = rng.normal();
  const bool transposed = rows < cols;  // QR of a tall matrix: (max, min)
  const Matrix tall = transposed ? Matrix(flat.transpose()) : flat;
  const Eigen::HouseholderQR<Matrix> qr(tall);
  Matrix q = qr.householderQ() * Matrix::Identity(tall.rows(), tall.cols());
  // Householder QR fixes Q only up to column signs; PyTorch makes R's diagonal positive.
  const auto diag = qr.matrixQR().diagonal();
  for (Eigen::Index j = 0; j < q.cols(); ++j)
    if (diag(j) < 0) q.col(j) *= -1.0;
  if (transposed) q.transposeInPlace();
  for (Eigen::Index i = 0; i < rows; ++i)
    for (Eigen::Index j = 0; j < cols; ++j)
      w[static_cast<size_t>(i * cols + j)] = static_cast<float>(gain * q(i, j));
}

void uniform_init(double bound, Rng& rng, std::span<float> w) {
  for (auto& x : w) x = static_cast<float>(rng.uniform(-bound, bound));
}

}  // namespace recur::policy
