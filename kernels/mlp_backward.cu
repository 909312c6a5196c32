// Activation derivative and bias gradient of a Linear layer's backward (see mlp_backward.h).
#include "core/error.h"
#include "kernels/block_reduce.cuh"
#include "kernels/mlp_backward.h"

namespace recur::kernels {
namespace {

constexpr int kBlock = 256;

// One thread per element of (rows, n), grid-stride. dy and g may alias (no __restrict__).
// tanh' is rounded op by op (__fmul_rn/__fsub_rn: no FMA contraction), the CPU's expression.
__global__ void activation_backward_kernel(const float* dy, const float* __restrict__ y, int rows,
                                           int n, Activation activation, float* g) {
  const size_t total = static_cast<size_t>(rows) * n;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float d = dy[i];
    switch (activation) {
      case Activation::kIdentity:
        g[i] = d;
        break;
      case Activation::kTanh:
        g[i] = __fmul_rn(d, __fsub_rn(1.0f, __fmul_rn(y[i], y[i])));
        break;
      case Activation::kRelu:
        g[i] = y[i] > 0.0f ? d : 0.0f;
        break;
    }
  }
}

// One block per kBiasCols adjacent columns (threadIdx.x: the column, so a warp reads 128
// contiguous bytes of a row), kBiasLanes row lanes per column (threadIdx.y). Lane l sums rows
// l, l + kBiasLanes, ... in order, then a fixed tree over the lanes: the order depends only on
// (rows, n), never on scheduling. Parallel over columns only: with the learner's widths (<= a few
// hundred) and minibatches (~1e4 rows) that is a few blocks; a two-pass split over rows is the
// next step if a profile ever shows this kernel.
constexpr int kBiasCols = 32, kBiasLanes = 32;

__global__ void bias_grad_kernel(const float* __restrict__ g, int rows, int n,
                                 float* __restrict__ db) {
  __shared__ float partial[kBiasLanes][kBiasCols];
  const int col = blockIdx.x * kBiasCols + static_cast<int>(threadIdx.x);
  float sum = 0.0f;
  if (col < n)
    for (int r = static_cast<int>(threadIdx.y); r < rows; r += kBiasLanes)
      sum += g[static_cast<size_t>(r) * n + col];
  partial[threadIdx.y][threadIdx.x] = sum;
  detail::fold_lanes<kBiasLanes>(partial);
  if (threadIdx.y == 0 && col < n) db[col] += partial[0][threadIdx.x];
}

}  // namespace

void launch_activation_backward(const float* dy, const float* y, int rows, int n,
                                Activation activation, float* g, cudaStream_t stream) {
  const size_t total = static_cast<size_t>(rows) * n;
  if (total == 0) return;
  const size_t blocks = (total + kBlock - 1) / kBlock;
  const int grid = static_cast<int>(blocks < 65535 ? blocks : 65535);
  activation_backward_kernel<<<grid, kBlock, 0, stream>>>(dy, y, rows, n, activation, g);
  CUDA_CHECK(cudaGetLastError());
}

void launch_bias_grad(const float* g, int rows, int n, float* db, cudaStream_t stream) {
  if (rows <= 0 || n <= 0) return;
  const dim3 block(kBiasCols, kBiasLanes);
  const int grid = (n + kBiasCols - 1) / kBiasCols;
  bias_grad_kernel<<<grid, block, 0, stream>>>(g, rows, n, db);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace recur::kernels
