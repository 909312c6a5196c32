#include "core/error.h"
#include "kernels/gather.h"

namespace recur::kernels {
namespace {

__global__ void gather_kernel(const float* __restrict__ src, float* __restrict__ dst,
                              const int64_t* __restrict__ index, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const int64_t j = index[i];
    dst[i] = j >= 0 ? src[j] : 0.0f;
  }
}

__global__ void gather_rows_kernel(const float* __restrict__ src, float* __restrict__ dst,
                                   const int32_t* __restrict__ index, int rows, int width) {
  const size_t n = static_cast<size_t>(rows) * width;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const size_t r = i / width, c = i % width;
    const int32_t j = index[r];
    dst[i] = j >= 0 ? src[static_cast<size_t>(j) * width + c] : 0.0f;
  }
}

int grid_for(size_t n, int block) {
  const size_t blocks = (n + block - 1) / block;
  return static_cast<int>(blocks < 65535 ? blocks : 65535);  // grid-stride loops cover the rest
}

}  // namespace

void launch_gather(const float* src, float* dst, const int64_t* index, size_t n,
                   cudaStream_t stream) {
  if (n == 0) return;
  constexpr int kBlock = 256;
  gather_kernel<<<grid_for(n, kBlock), kBlock, 0, stream>>>(src, dst, index, n);
  CUDA_CHECK(cudaGetLastError());
}

void launch_gather_rows(const float* src, float* dst, const int32_t* index, int rows, int width,
                        cudaStream_t stream) {
  const size_t n = static_cast<size_t>(rows) * static_cast<size_t>(width);
  if (n == 0) return;
  constexpr int kBlock = 256;
  gather_rows_kernel<<<grid_for(n, kBlock), kBlock, 0, stream>>>(src, dst, index, rows, width);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace recur::kernels
