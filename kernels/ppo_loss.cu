// The minibatch PPO loss and advantage normalization (see ppo_loss.h). Each reduction is the
// two-stage fixed tree of kernels/block_reduce.cuh: grid-stride per thread, a block tree, then
// one block per summed quantity over the partials.
#include <math.h>

#include "core/error.h"
#include "kernels/block_reduce.cuh"
#include "kernels/ppo_loss.h"

namespace recur::kernels {
namespace {

using detail::block_sum;
using detail::kReduceBlock;

// Where normalization keeps its two float64 sums between kernels (past the partials).
constexpr int kAdvSumSlot = kReductionScratch - detail::kResultSlots;
constexpr int kAdvSqSlot = kAdvSumSlot + 1;

// Stage 1 of sum_i adv[i] (center == null) or of sum_i (adv[i] - mean)^2 with mean = *center / m:
// partials (gridDim.x).
__global__ void advantage_moment_kernel(const float* __restrict__ adv, int m,
                                        const double* __restrict__ center,
                                        double* __restrict__ partials) {
  __shared__ double sh[kReduceBlock];
  const double mean = center ? *center / static_cast<double>(m) : 0.0;
  double acc = 0.0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < m; i += gridDim.x * blockDim.x) {
    const double a = adv[i];
    acc += center ? (a - mean) * (a - mean) : a;
  }
  const double total = block_sum(acc, sh);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

// adv[i] = (adv[i] - mean) / (std + 1e-8), mean = sum / m, std = sqrt(sq / (m - 1)).
__global__ void advantage_apply_kernel(float* __restrict__ adv, int m,
                                       const double* __restrict__ sum,
                                       const double* __restrict__ sq) {
  const double mean = *sum / static_cast<double>(m);
  const double sd = sqrt(*sq / static_cast<double>(m - 1));
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < m; i += gridDim.x * blockDim.x)
    adv[i] = static_cast<float>((adv[i] - mean) / (sd + 1e-8));
}

// Per sample: ppo_element's gradients written, its loss terms (and the entropy) summed in the
// block; partials (kPpoSums, gridDim.x).
__global__ void ppo_loss_kernel(
    const float* __restrict__ log_probs, const float* __restrict__ old_log_probs,
    const float* __restrict__ advantages, const float* __restrict__ values,
    const float* __restrict__ old_values, const float* __restrict__ returns,
    const float* __restrict__ entropies, int m, PpoLossConfig config, double inv_m,
    float d_ent_value, float* __restrict__ d_logp, float* __restrict__ d_ent,
    float* __restrict__ d_values, double* __restrict__ partials) {
  __shared__ double sh[kReduceBlock];
  double acc[kPpoSums] = {0, 0, 0, 0, 0};
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < m; i += gridDim.x * blockDim.x) {
    const PpoElement e = ppo_element(log_probs[i], old_log_probs[i], advantages[i], values[i],
                                     old_values[i], returns[i], config, inv_m);
    d_logp[i] = e.d_logp;
    d_values[i] = e.d_value;
    d_ent[i] = d_ent_value;
    acc[kSumPolicyLoss] += e.policy_loss;
    acc[kSumValueLoss] += e.value_loss;
    acc[kSumEntropy] += static_cast<double>(entropies[i]);
    acc[kSumApproxKl] += e.approx_kl;
    acc[kSumClipped] += e.clipped;
  }
  for (int q = 0; q < kPpoSums; ++q) {
    const double total = block_sum(acc[q], sh);
    if (threadIdx.x == 0) partials[static_cast<size_t>(q) * gridDim.x + blockIdx.x] = total;
  }
}

}  // namespace

void launch_normalize_advantages(float* adv, int m, double* scratch, cudaStream_t stream) {
  RECUR_CHECK_ARG(m > 1, "normalize_advantages: m {} (needs at least 2 samples)", m);
  const int grid = detail::reduce_grid(m);
  advantage_moment_kernel<<<grid, kReduceBlock, 0, stream>>>(adv, m, nullptr, scratch);
  CUDA_CHECK(cudaGetLastError());
  detail::launch_sum_partials(scratch, grid, 1, scratch + kAdvSumSlot, nullptr, stream);
  advantage_moment_kernel<<<grid, kReduceBlock, 0, stream>>>(adv, m, scratch + kAdvSumSlot,
                                                             scratch);
  CUDA_CHECK(cudaGetLastError());
  detail::launch_sum_partials(scratch, grid, 1, scratch + kAdvSqSlot, nullptr, stream);
  advantage_apply_kernel<<<grid, kReduceBlock, 0, stream>>>(adv, m, scratch + kAdvSumSlot,
                                                            scratch + kAdvSqSlot);
  CUDA_CHECK(cudaGetLastError());
}

void launch_ppo_loss(const float* log_probs, const float* old_log_probs, const float* advantages,
                     const float* values, const float* old_values, const float* returns,
                     const float* entropies, int m, const PpoLossConfig& config, float* d_logp,
                     float* d_ent, float* d_values, double* sums, double* scratch,
                     cudaStream_t stream) {
  RECUR_CHECK_ARG(m >= 0, "ppo_loss: m {}", m);
  if (m == 0) {
    CUDA_CHECK(cudaMemsetAsync(sums, 0, kPpoSums * sizeof(double), stream));
    return;
  }
  // The host's constants, computed as agent/ppo/updater.cc computes them.
  const double inv_m = 1.0 / static_cast<double>(m);
  const float d_ent_value = static_cast<float>(-config.ent_coef / static_cast<double>(m));
  const int grid = detail::reduce_grid(m);
  ppo_loss_kernel<<<grid, kReduceBlock, 0, stream>>>(
      log_probs, old_log_probs, advantages, values, old_values, returns, entropies, m, config,
      inv_m, d_ent_value, d_logp, d_ent, d_values, scratch);
  CUDA_CHECK(cudaGetLastError());
  detail::launch_sum_partials(scratch, grid, kPpoSums, sums, nullptr, stream);
}

}  // namespace recur::kernels
