// Stage 2 of the deterministic reductions (see kernels/reduction.h and block_reduce.cuh).
#include "core/error.h"
#include "kernels/block_reduce.cuh"

namespace recur::kernels::detail {
namespace {

// One block per quantity q: each thread adds its strided partials in order, then the block tree.
__global__ void sum_partials_kernel(const double* __restrict__ partials, int count,
                                    double* __restrict__ out, float* __restrict__ add_to) {
  __shared__ double sh[kReduceBlock];
  const double* p = partials + static_cast<size_t>(blockIdx.x) * count;
  double acc = 0.0;
  for (int b = threadIdx.x; b < count; b += blockDim.x) acc += p[b];
  const double total = block_sum(acc, sh);
  if (threadIdx.x != 0) return;
  if (add_to)
    add_to[blockIdx.x] += static_cast<float>(total);
  else
    out[blockIdx.x] = total;
}

}  // namespace

void launch_sum_partials(const double* partials, int count, int quantities, double* out,
                         float* add_to, cudaStream_t stream) {
  RECUR_ASSERT(count > 0 && quantities > 0 && (out != nullptr) != (add_to != nullptr));
  sum_partials_kernel<<<quantities, kReduceBlock, 0, stream>>>(partials, count, out, add_to);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace recur::kernels::detail
