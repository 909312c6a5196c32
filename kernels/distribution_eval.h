// The action distributions in the device learner's minibatch update: log-probs and entropies of
// the rollout's actions under the current policy (forward), and their gradients w.r.t. the
// actor head's outputs (backward). One thread per row, each calling the row functions of
// kernels/distribution_math.h, which transcribe policy/distributions.cc; results agree with
// policy::Categorical / policy::DiagGaussian to ~1e-6 relative (CUDA's expf/logf are within
// 2 ulp of the host's; everything else is the same float32 operations in the same order).
//
// Where the host classes throw (an action outside [0, n) or not an integer; a row without a
// finite logit) the kernels cannot: they write NaN for that row (log-prob, or the row's
// d_logits), which the learner's non-finite check then reports as a skipped update.
#pragma once

#include <cuda_runtime_api.h>

namespace recur::kernels {

// The widest Gaussian action the backward supports: its per-thread float64 accumulators live in
// shared memory (64 threads x kMaxGaussianDim doubles = 32 KiB per block).
inline constexpr int kMaxGaussianDim = 64;

// Categorical(logits) per row:
//   log_probs[r] = log p(actions[r]),  entropies[r] = -sum_j p_j log p_j
//   logits (rows, n), actions (rows; integer-valued floats), log_probs (rows), entropies (rows)
void launch_categorical_evaluate(const float* logits, const float* actions, int rows, int n,
                                 float* log_probs, float* entropies, cudaStream_t stream);

// d_logits[r][j] = d_logp[r] ([j = a_r] - p_j) - d_ent[r] p_j (log p_j + H_r)   (WRITTEN)
//   logits (rows, n), actions (rows), d_logp (rows), d_ent (rows), d_logits (rows, n)
void launch_categorical_backward(const float* logits, const float* actions, const float* d_logp,
                                 const float* d_ent, int rows, int n, float* d_logits,
                                 cudaStream_t stream);

// Diagonal Gaussian, mean per row and one shared log_std:
//   log_probs[r] = sum_j [ -z_j^2 / 2 - log_std_j - log(2 pi) / 2 ],  z_j = (a_j - mu_j) / sigma_j
//   entropies[r] = sum_j [ 1/2 + log(2 pi) / 2 + log_std_j ]
//   mean (rows, dim), log_std (dim), actions (rows, dim), log_probs (rows), entropies (rows)
void launch_gaussian_evaluate(const float* mean, const float* log_std, const float* actions,
                              int rows, int dim, float* log_probs, float* entropies,
                              cudaStream_t stream);

// d_mean[r][j] = d_logp[r] z_j / sigma_j                                         (WRITTEN)
// d_log_std[j] += (float) sum_r [ d_logp[r] (z_j^2 - 1) + d_ent[r] ]              (ADDED)
// The sum over rows is a deterministic float64 reduction (kernels/reduction.h), then rounded
// once to float, as the host's column accumulator. dim <= kMaxGaussianDim.
//   mean (rows, dim), log_std (dim), actions (rows, dim), d_logp (rows), d_ent (rows),
//   d_mean (rows, dim), d_log_std (dim), scratch (kReductionScratch doubles)
void launch_gaussian_backward(const float* mean, const float* log_std, const float* actions,
                              const float* d_logp, const float* d_ent, int rows, int dim,
                              float* d_mean, float* d_log_std, double* scratch,
                              cudaStream_t stream);

}  // namespace recur::kernels
