#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "core/error.h"
#include "kernels/low_float.h"

namespace recur::kernels {
namespace {

template <LowFloat kType>
__device__ uint16_t to16(float x) {
  if constexpr (kType == LowFloat::kHalf) {
    return __half_as_ushort(__float2half_rn(x));
  } else {
    return __bfloat16_as_ushort(__float2bfloat16_rn(x));
  }
}

template <LowFloat kType>
__device__ float from16(uint16_t bits) {
  if constexpr (kType == LowFloat::kHalf) {
    return __half2float(__ushort_as_half(bits));
  } else {
    return __bfloat162float(__ushort_as_bfloat16(bits));
  }
}

#define RECUR_GRID_STRIDE(i, n)                                                      \
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; \
       i += static_cast<size_t>(gridDim.x) * blockDim.x)

template <LowFloat kType>
__global__ void to_low_kernel(const float* __restrict__ src, uint16_t* __restrict__ dst, size_t n,
                              float scale) {
  RECUR_GRID_STRIDE(i, n) {
    dst[i] = to16<kType>(scale * src[i]);
  }
}

template <LowFloat kType>
__global__ void from_low_kernel(const uint16_t* __restrict__ src, float* __restrict__ dst, size_t n,
                                float scale) {
  RECUR_GRID_STRIDE(i, n) {
    dst[i] = scale * from16<kType>(src[i]);
  }
}

template <LowFloat kType>
__global__ void gather_to_low_kernel(const float* __restrict__ src, uint16_t* __restrict__ dst,
                                     const int64_t* __restrict__ index, size_t n) {
  RECUR_GRID_STRIDE(i, n) {
    const int64_t j = index[i];
    dst[i] = j >= 0 ? to16<kType>(src[j]) : uint16_t{0};  // +0 in both types
  }
}

template <LowFloat kType>
__global__ void scatter_add_kernel(const uint16_t* __restrict__ src, float* __restrict__ dst,
                                   const int64_t* __restrict__ index, size_t n, float scale) {
  RECUR_GRID_STRIDE(i, n) {
    const int64_t j = index[i];
    if (j >= 0) dst[j] += scale * from16<kType>(src[i]);
  }
}

#undef RECUR_GRID_STRIDE

constexpr int kBlock = 256;

int grid_for(size_t n) {
  const size_t blocks = (n + kBlock - 1) / kBlock;
  return static_cast<int>(blocks < 65535 ? blocks : 65535);  // grid-stride loops cover the rest
}

}  // namespace

void launch_to_low_float(const float* src, uint16_t* dst, size_t n, float scale, LowFloat type,
                         cudaStream_t stream) {
  if (n == 0) return;
  if (type == LowFloat::kHalf)
    to_low_kernel<LowFloat::kHalf><<<grid_for(n), kBlock, 0, stream>>>(src, dst, n, scale);
  else
    to_low_kernel<LowFloat::kBfloat16><<<grid_for(n), kBlock, 0, stream>>>(src, dst, n, scale);
  CUDA_CHECK(cudaGetLastError());
}

void launch_from_low_float(const uint16_t* src, float* dst, size_t n, float scale, LowFloat type,
                           cudaStream_t stream) {
  if (n == 0) return;
  if (type == LowFloat::kHalf)
    from_low_kernel<LowFloat::kHalf><<<grid_for(n), kBlock, 0, stream>>>(src, dst, n, scale);
  else
    from_low_kernel<LowFloat::kBfloat16><<<grid_for(n), kBlock, 0, stream>>>(src, dst, n, scale);
  CUDA_CHECK(cudaGetLastError());
}

void launch_gather_to_low_float(const float* src, uint16_t* dst, const int64_t* index, size_t n,
                                LowFloat type, cudaStream_t stream) {
  if (n == 0) return;
  if (type == LowFloat::kHalf)
    gather_to_low_kernel<LowFloat::kHalf><<<grid_for(n), kBlock, 0, stream>>>(src, dst, index, n);
  else
    gather_to_low_kernel<LowFloat::kBfloat16>
        <<<grid_for(n), kBlock, 0, stream>>>(src, dst, index, n);
  CUDA_CHECK(cudaGetLastError());
}

void launch_scatter_add_from_low_float(const uint16_t* src, float* dst, const int64_t* index,
                                       size_t n, float scale, LowFloat type, cudaStream_t stream) {
  if (n == 0) return;
  if (type == LowFloat::kHalf)
    scatter_add_kernel<LowFloat::kHalf>
        <<<grid_for(n), kBlock, 0, stream>>>(src, dst, index, n, scale);
  else
    scatter_add_kernel<LowFloat::kBfloat16>
        <<<grid_for(n), kBlock, 0, stream>>>(src, dst, index, n, scale);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace recur::kernels
