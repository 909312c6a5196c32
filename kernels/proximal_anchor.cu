// algo.async_anchor's correction and its scatter, one thread per sample (see proximal_anchor.h).
#include "core/error.h"
#include "kernels/proximal_anchor.h"

namespace recur::kernels {
namespace {

constexpr int kBlock = 256;

__global__ void proximal_anchor_kernel(const int32_t* __restrict__ rows,
                                       const float* __restrict__ proximal, int m,
                                       float* __restrict__ log_probs,
                                       float* __restrict__ advantages) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < m) proximal_anchor_at(k, rows, proximal, log_probs, advantages);
}

__global__ void proximal_scatter_kernel(const int32_t* __restrict__ rows,
                                        const float* __restrict__ proximal,
                                        const float* __restrict__ values, int m,
                                        float* __restrict__ proximal_out,
                                        float* __restrict__ values_out) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < m) proximal_scatter_at(k, rows, proximal, values, proximal_out, values_out);
}

}  // namespace

void launch_proximal_anchor(const int32_t* rows, const float* proximal, int m, float* log_probs,
                            float* advantages, cudaStream_t stream) {
  RECUR_CHECK_ARG(m >= 0, "proximal anchor: m {} must be >= 0", m);
  if (m == 0) return;
  RECUR_CHECK_ARG(proximal && log_probs && advantages,
                  "proximal anchor: every buffer must be device memory");
  proximal_anchor_kernel<<<(m + kBlock - 1) / kBlock, kBlock, 0, stream>>>(rows, proximal, m,
                                                                           log_probs, advantages);
  CUDA_CHECK(cudaGetLastError());
}

void launch_proximal_scatter(const int32_t* rows, const float* proximal, const float* values, int m,
                             float* proximal_out, float* values_out, cudaStream_t stream) {
  RECUR_CHECK_ARG(m >= 0, "proximal scatter: m {} must be >= 0", m);
  if (m == 0) return;
  RECUR_CHECK_ARG(rows && proximal && proximal_out && (values == nullptr || values_out),
                  "proximal scatter: every buffer must be device memory");
  proximal_scatter_kernel<<<(m + kBlock - 1) / kBlock, kBlock, 0, stream>>>(
      rows, proximal, values, m, proximal_out, values_out);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace recur::kernels
