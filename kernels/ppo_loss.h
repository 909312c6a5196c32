// The PPO loss of one minibatch on the device: advantage normalization, then per sample the
// clipped objective's terms and the gradients handed to the network, and the minibatch's sums for
// the update's statistics. The per-sample math is kernels::ppo_element (kernels/learner_math.h),
// the very function the host updater (agent/ppo/updater.cc) uses; sums are deterministic float64
// reductions (kernels/reduction.h). Nothing here synchronizes with the host, so a minibatch
// update can be captured in one CUDA graph.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/learner_math.h"

namespace recur::kernels {

// The indices of launch_ppo_loss's sums.
enum PpoSum : int {
  kSumPolicyLoss = 0,
  kSumValueLoss = 1,
  kSumEntropy = 2,
  kSumApproxKl = 3,
  kSumClipped = 4,
  kPpoSums = 5,
};

// adv[i] = (adv[i] - mean) / (std + 1e-8) in place, mean and the unbiased sample std (divisor
// m - 1) in float64, as agent/ppo/updater.cc. Requires m > 1 (the caller skips normalization
// otherwise).
//   adv (m), scratch (kReductionScratch doubles)
void launch_normalize_advantages(float* adv, int m, double* scratch, cudaStream_t stream);

// Per sample i < m, e = ppo_element(log_probs[i], old_log_probs[i], advantages[i], values[i],
// old_values[i], returns[i], config, 1.0 / m):
//   d_logp[i] = e.d_logp,  d_values[i] = e.d_value,  d_ent[i] = (float) (-ent_coef / m)
// sums (WRITTEN) = [sum policy_loss, sum value_loss, sum entropies[i], sum approx_kl,
// sum clipped] over i (sums, not means: indices PpoSum), each in float64; all zero when m = 0.
//   log_probs, old_log_probs, advantages, values, old_values, returns, entropies (m),
//   d_logp, d_ent, d_values (m), sums (kPpoSums doubles), scratch (kReductionScratch doubles)
void launch_ppo_loss(const float* log_probs, const float* old_log_probs, const float* advantages,
                     const float* values, const float* old_values, const float* returns,
                     const float* entropies, int m, const PpoLossConfig& config, float* d_logp,
                     float* d_ent, float* d_values, double* sums, double* scratch,
                     cudaStream_t stream);

}  // namespace recur::kernels
