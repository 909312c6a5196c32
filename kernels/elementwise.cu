#include "core/error.h"
#include "kernels/elementwise.h"

namespace recur::kernels {
namespace {

constexpr int kBlock = 256;
constexpr long long kMaxBlocks = 4096;  // the grid-stride loop covers the rest

__global__ void add_inplace_kernel(float* __restrict__ y, const float* __restrict__ x,
                                   long long n) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += stride)
    y[i] += x[i];
}

}  // namespace

void launch_add_inplace(float* y, const float* x, long long n, cudaStream_t stream) {
  RECUR_CHECK_ARG(n >= 0, "add_inplace: n {}", n);
  if (n == 0) return;
  const long long blocks = (n + kBlock - 1) / kBlock;
  add_inplace_kernel<<<static_cast<int>(blocks < kMaxBlocks ? blocks : kMaxBlocks), kBlock, 0,
                       stream>>>(y, x, n);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace recur::kernels
