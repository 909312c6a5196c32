// The action distributions of the CUDA policy actor: from the actor head's output to the action,
// its log-prob, one thread per env slot. The formulas are policy/distributions.h's, term by term
// (float32 where the CPU uses float32, float64 where it uses float64), so that a deterministic
// action equals the CPU's and a log-prob agrees to ~1e-6 relative.
//
// Sampling: counter-based Philox (curandStatePhilox4_32_10_t), curand_init(*seed, subsequence =
// slot, offset = 0): every slot draws from its own stream, and the same seed gives the same
// actions on any launch configuration. The seed and the deterministic flag are READ FROM DEVICE
// MEMORY (the actor's input block), not passed by value, so that one captured CUDA graph serves
// every step, sampled or not. The draws are not the CPU Rng's: sampled actions match the CPU in
// distribution, not value by value.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace recur::kernels {

// Categorical over n logits per slot:
//   log p_j = z_j - max - log(sum_k exp(z_k - max))            (float32, as Categorical::row_stats)
//   mode    = the first j with the largest z_j
//   sample  = inverse CDF: the first j with u < sum_{k<=j} p_k, u uniform in [0, 1), p_k in
//             float64; rounding that leaves u above the total picks the last possible action.
// actions (B) get the index as a float, log_probs (B) the log-prob of that action.
//   logits (B, n), seed (1), deterministic (1; != 0: mode), actions (B), log_probs (B)
void launch_categorical_head(const float* logits, int batch, int n, const uint64_t* seed,
                             const uint32_t* deterministic, float* actions, float* log_probs,
                             cudaStream_t stream);

// Diagonal Gaussian, mean from the head, state-independent log_std:
//   a_j      = mean_j + exp(log_std_j) eps_j, eps_j standard normal (float64), or mean_j (mode)
//   log p(a) = sum_j [ -z_j^2 / 2 - log_std_j - log(2 pi) / 2 ],  z_j = (a_j - mean_j)
//   exp(-log_std_j) mean (B, d), log_std (d), seed (1), deterministic (1), actions (B, d),
//   log_probs (B)
void launch_gaussian_head(const float* mean, const float* log_std, int batch, int dim,
                          const uint64_t* seed, const uint32_t* deterministic, float* actions,
                          float* log_probs, cudaStream_t stream);

// Tanh-squashed actions, policy::TanhGaussian and policy::TanhDeterministic (the formulas are
// policy/squashed_action.h's functions, called on the device). Actions in env units,
// to_env_action(a, low_j, high_j) kept inside [low_j, high_j].
//   tanh_gaussian: head row [mean (d), raw log-std (d)]; log_std = squash_log_std(raw);
//     a = tanh(mean + exp(log_std) eps) (eps float64; mode: eps = 0);
//     log_probs = sum_j tanh_gaussian_log_prob_term(eps_j, log_std_j, a_j)
//   tanh: head row the mean (d); a = tanh(mean), sampled clamp(tanh(mean) + noise eps, -1, 1);
//     log_probs = 0
// head (B, 2d | d), low (d), high (d), seed (1), deterministic (1), actions (B, d), log_probs (B)
void launch_tanh_gaussian_head(const float* head, const float* low, const float* high, int batch,
                               int dim, const uint64_t* seed, const uint32_t* deterministic,
                               float* actions, float* log_probs, cudaStream_t stream);
void launch_tanh_head(const float* mean, const float* low, const float* high, int batch, int dim,
                      float noise, const uint64_t* seed, const uint32_t* deterministic,
                      float* actions, float* log_probs, cudaStream_t stream);

}  // namespace recur::kernels
