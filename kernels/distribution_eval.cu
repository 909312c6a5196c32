// The device learner's distribution kernels (see distribution_eval.h). One thread per row: n and
// dim are action counts (small), and the serial per-row loops keep the host's summation order.
#include <math.h>

#include <algorithm>

#include "core/error.h"
#include "kernels/block_reduce.cuh"
#include "kernels/distribution_eval.h"
#include "kernels/distribution_math.h"

namespace recur::kernels {
namespace {

constexpr int kRowBlock = 128;
constexpr int kGaussianBlock = 64;  // x kMaxGaussianDim doubles of shared memory per block

int row_grid(int rows) {
  return (rows + kRowBlock - 1) / kRowBlock;
}

// One thread per row r. A bad action (the host would throw) gives a NaN log-prob.
__global__ void categorical_evaluate_kernel(const float* __restrict__ logits,
                                            const float* __restrict__ actions, int rows, int n,
                                            float* __restrict__ log_probs,
                                            float* __restrict__ entropies) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* z = logits + static_cast<size_t>(r) * n;
  const int a = categorical_action_index(actions[r], n);
  float lp = NAN, ent;
  if (a >= 0) {
    categorical_row_evaluate(z, n, a, &lp, &ent);
  } else {
    float max, lse;
    categorical_row_stats(z, n, &max, &lse);
    ent = categorical_row_entropy(z, n, max, lse);
  }
  log_probs[r] = lp;
  entropies[r] = ent;
}

// One thread per row r. A bad action gives a NaN row of d_logits.
__global__ void categorical_backward_kernel(const float* __restrict__ logits,
                                            const float* __restrict__ actions,
                                            const float* __restrict__ d_logp,
                                            const float* __restrict__ d_ent, int rows, int n,
                                            float* __restrict__ d_logits) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const size_t offset = static_cast<size_t>(r) * n;
  const int a = categorical_action_index(actions[r], n);
  if (a < 0) {
    for (int j = 0; j < n; ++j) d_logits[offset + j] = NAN;
    return;
  }
  categorical_row_backward(logits + offset, n, a, d_logp[r], d_ent[r], d_logits + offset);
}

// One thread per row r.
__global__ void gaussian_evaluate_kernel(const float* __restrict__ mean,
                                         const float* __restrict__ log_std,
                                         const float* __restrict__ actions, int rows, int dim,
                                         float* __restrict__ log_probs,
                                         float* __restrict__ entropies) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const size_t offset = static_cast<size_t>(r) * dim;
  gaussian_row_evaluate(mean + offset, log_std, actions + offset, dim, &log_probs[r],
                        &entropies[r]);
}

// Stage 1 of the log_std reduction, fused with d_mean: thread t adds its grid-stride rows' terms
// into its own float64 accumulators acc[t][j] (shared memory), the block adds those in a fixed
// tree, and partials[j * gridDim.x + block] gets the block's sum for column j.
__global__ void gaussian_backward_kernel(const float* __restrict__ mean,
                                         const float* __restrict__ log_std,
                                         const float* __restrict__ actions,
                                         const float* __restrict__ d_logp,
                                         const float* __restrict__ d_ent, int rows, int dim,
                                         float* __restrict__ d_mean,
                                         double* __restrict__ partials) {
  extern __shared__ double acc[];  // (blockDim.x, dim)
  double* mine = acc + static_cast<size_t>(threadIdx.x) * dim;
  for (int j = 0; j < dim; ++j) mine[j] = 0.0;
  for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += gridDim.x * blockDim.x) {
    const size_t offset = static_cast<size_t>(r) * dim;
    gaussian_row_backward(mean + offset, log_std, actions + offset, dim, d_logp[r], d_ent[r],
                          d_mean + offset, mine);
  }
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s)
      for (int j = 0; j < dim; ++j) mine[j] += acc[(threadIdx.x + s) * dim + j];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    for (int j = 0; j < dim; ++j)
      partials[static_cast<size_t>(j) * gridDim.x + blockIdx.x] = acc[j];
}

}  // namespace

void launch_categorical_evaluate(const float* logits, const float* actions, int rows, int n,
                                 float* log_probs, float* entropies, cudaStream_t stream) {
  RECUR_CHECK_ARG(rows >= 0 && n > 0, "categorical_evaluate: rows {} and n {}", rows, n);
  if (rows == 0) return;
  categorical_evaluate_kernel<<<row_grid(rows), kRowBlock, 0, stream>>>(logits, actions, rows, n,
                                                                        log_probs, entropies);
  CUDA_CHECK(cudaGetLastError());
}

void launch_categorical_backward(const float* logits, const float* actions, const float* d_logp,
                                 const float* d_ent, int rows, int n, float* d_logits,
                                 cudaStream_t stream) {
  RECUR_CHECK_ARG(rows >= 0 && n > 0, "categorical_backward: rows {} and n {}", rows, n);
  if (rows == 0) return;
  categorical_backward_kernel<<<row_grid(rows), kRowBlock, 0, stream>>>(logits, actions, d_logp,
                                                                        d_ent, rows, n, d_logits);
  CUDA_CHECK(cudaGetLastError());
}

void launch_gaussian_evaluate(const float* mean, const float* log_std, const float* actions,
                              int rows, int dim, float* log_probs, float* entropies,
                              cudaStream_t stream) {
  RECUR_CHECK_ARG(rows >= 0 && dim > 0, "gaussian_evaluate: rows {} and dim {}", rows, dim);
  if (rows == 0) return;
  gaussian_evaluate_kernel<<<row_grid(rows), kRowBlock, 0, stream>>>(mean, log_std, actions, rows,
                                                                     dim, log_probs, entropies);
  CUDA_CHECK(cudaGetLastError());
}

void launch_gaussian_backward(const float* mean, const float* log_std, const float* actions,
                              const float* d_logp, const float* d_ent, int rows, int dim,
                              float* d_mean, float* d_log_std, double* scratch,
                              cudaStream_t stream) {
  RECUR_CHECK_ARG(rows >= 0 && dim > 0 && dim <= kMaxGaussianDim,
                  "gaussian_backward: rows {} and dim {} (dim at most {})", rows, dim,
                  kMaxGaussianDim);
  if (rows == 0) return;  // nothing to add to d_log_std
  // The grid depends on rows and dim only (deterministic); dim partials per block must fit.
  const int max_blocks = std::min(detail::kMaxReduceBlocks, kReductionScratch / dim);
  const int grid = detail::reduce_grid(rows, kGaussianBlock, max_blocks);
  const size_t shared = static_cast<size_t>(kGaussianBlock) * dim * sizeof(double);
  gaussian_backward_kernel<<<grid, kGaussianBlock, shared, stream>>>(
      mean, log_std, actions, d_logp, d_ent, rows, dim, d_mean, scratch);
  CUDA_CHECK(cudaGetLastError());
  detail::launch_sum_partials(scratch, grid, dim, nullptr, d_log_std, stream);
}

}  // namespace recur::kernels
