// algo.async_anchor's correction, one thread per sample of the chunk (see proximal_anchor.h).
#include "core/error.h"
#include "kernels/proximal_anchor.h"

namespace recur::kernels {
namespace {

__global__ void proximal_anchor_kernel(const int32_t* __restrict__ rows,
                                       const float* __restrict__ proximal, int m,
                                       float* __restrict__ log_probs,
                                       float* __restrict__ advantages) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < m) proximal_anchor_at(k, rows, proximal, log_probs, advantages);
}

}  // namespace

void launch_proximal_anchor(const int32_t* rows, const float* proximal, int m, float* log_probs,
                            float* advantages, cudaStream_t stream) {
  RECUR_CHECK_ARG(m >= 0, "proximal anchor: m {} must be >= 0", m);
  if (m == 0) return;
  RECUR_CHECK_ARG(rows && proximal && log_probs && advantages,
                  "proximal anchor: every buffer must be device memory");
  constexpr int kBlock = 256;
  proximal_anchor_kernel<<<(m + kBlock - 1) / kBlock, kBlock, 0, stream>>>(rows, proximal, m,
                                                                           log_probs, advantages);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace recur::kernels
