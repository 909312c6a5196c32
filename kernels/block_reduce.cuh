// Device-side pieces of the deterministic reductions (kernels/reduction.h), shared by the
// reducing kernels' .cu files. CUDA only: include from .cu files.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/reduction.h"

namespace recur::kernels::detail {

inline constexpr int kReduceBlock = 256;       // threads per block of stage 1 and stage 2
inline constexpr int kMaxReduceBlocks = 1024;  // stage-1 blocks, i.e. partials per quantity
// Doubles at the end of the scratch for a launcher's intermediate results (never partials).
inline constexpr int kResultSlots = 8;
static_assert(5 * kMaxReduceBlocks + kResultSlots <= kReductionScratch,
              "five summed quantities (launch_ppo_loss) must fit the scratch");

// Stage-1 blocks for n elements: a function of n alone, so the summation tree is the same on
// every GPU. At least 1, so that stage 2 always has a partial to read.
inline int reduce_grid(long long n, int block = kReduceBlock, int max_blocks = kMaxReduceBlocks) {
  const long long blocks = (n + block - 1) / block;
  return blocks < 1 ? 1 : (blocks > max_blocks ? max_blocks : static_cast<int>(blocks));
}

// The sum of v over the block (blockDim.x a power of two, sh at least blockDim.x doubles) in a
// fixed tree; every thread gets the total. Ends with a barrier, so sh may be reused at once.
__device__ inline double block_sum(double v, double* sh) {
  sh[threadIdx.x] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
    __syncthreads();
  }
  const double total = sh[0];
  __syncthreads();
  return total;
}

// Folds the row lanes of a (kLanes, columns) tile in shared memory in a fixed tree, lane 0 ending
// with each column's total: the column sums of kernels whose threadIdx.y is a row lane and
// threadIdx.x a column (kLanes a power of two, = blockDim.y). The caller writes its lane's value
// and then every thread of the block calls this (it holds barriers).
template <int kLanes, typename T, int kStride>
__device__ inline void fold_lanes(T (*partial)[kStride]) {
  __syncthreads();
  for (int half = kLanes / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.y) < half)
      partial[threadIdx.y][threadIdx.x] += partial[threadIdx.y + half][threadIdx.x];
    __syncthreads();
  }
}

// Stage 2: for q < quantities, total_q = the sum of partials[q * count + b] over b < count (in a
// fixed tree); out[q] = total_q, or, when add_to is given, add_to[q] += (float) total_q instead.
//   partials (quantities, count), out (quantities) or null, add_to (quantities) or null
void launch_sum_partials(const double* partials, int count, int quantities, double* out,
                         float* add_to, cudaStream_t stream);

}  // namespace recur::kernels::detail
