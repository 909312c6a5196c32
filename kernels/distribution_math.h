// The per-row math of the action distributions, written ONCE for both devices: a term-by-term
// transcription of policy/distributions.cc (float32 where it uses float32, float64 where it uses
// float64, the same operations in the same order), which the device learner's kernels
// (kernels/distribution_eval.cu) call row by row. tests/kernels/distribution_math_test.cc holds
// these functions equal to policy::Categorical / policy::DiagGaussian bit for bit on the host.
// Plain C++ under the host compiler (CPU-only builds include it); __host__ __device__ under nvcc.
//
// The host classes throw on a bad action or a row without a finite logit; these functions cannot
// (they run on the device), so they leave validation to the caller: categorical_action_index
// says whether an action is valid, and a row whose logits are all -inf yields NaN.
#pragma once

#include <math.h>

#ifndef RECUR_HD  // the same definition as kernels/learner_math.h's
#ifdef __CUDACC__
#define RECUR_HD __host__ __device__
#else
#define RECUR_HD
#endif
#endif

namespace recur::kernels {

inline constexpr float kGaussianHalfLog2Pi = 0.918938533204672741780329736406f;  // log(2 pi) / 2

// ---------------------------------------------------------------------------------------------
// Categorical(logits), one row z (n) of unnormalized logits; -inf marks an impossible action.

// The action index of a float-coded action, or -1 unless it is an integer in [0, n) (the test of
// Categorical::action_at).
RECUR_HD inline int categorical_action_index(float a, int n) {
  return a >= 0.0f && a < static_cast<float>(n) && a == floorf(a) ? static_cast<int>(a) : -1;
}

// Row max and log-sum-exp of (z - max), so that log p_j = z_j - max - lse (Categorical::row_stats).
// The max is std::max's (a < b ? b : a), so that a NaN logit is treated as the host treats it.
RECUR_HD inline void categorical_row_stats(const float* z, int n, float* max, float* lse) {
  float mx = -INFINITY;
  for (int j = 0; j < n; ++j) mx = mx < z[j] ? z[j] : mx;
  float sum = 0.0f;
  for (int j = 0; j < n; ++j) sum += expf(z[j] - mx);  // the max term is 1: sum >= 1
  *max = mx;
  *lse = logf(sum);
}

// -sum_j p_j log p_j of one row, given its stats (Categorical::entropy's inner loop).
RECUR_HD inline float categorical_row_entropy(const float* z, int n, float max, float lse) {
  float h = 0.0f;
  for (int j = 0; j < n; ++j) {
    const float log_p = z[j] - max - lse;
    const float p = expf(log_p);
    if (p > 0.0f) h -= p * log_p;  // p = 0 (a -inf logit or underflow) adds 0, not 0 * -inf
  }
  return h;
}

// log p(action) and the entropy of one row. action in [0, n) (see categorical_action_index).
RECUR_HD inline void categorical_row_evaluate(const float* z, int n, int action, float* log_prob,
                                              float* entropy) {
  float max, lse;
  categorical_row_stats(z, n, &max, &lse);
  *log_prob = z[action] - max - lse;
  *entropy = categorical_row_entropy(z, n, max, lse);
}

// d_logits (n) of one row (Categorical::backward):
//   d_logits_j = d_logp ([j = action] - p_j) - d_ent p_j (log p_j + H)
// action in [0, n), or -1 for "no log-prob term" (then d_logp must be 0: the host's empty d_logp).
RECUR_HD inline void categorical_row_backward(const float* z, int n, int action, float d_logp,
                                              float d_ent, float* d_logits) {
  float max, lse;
  categorical_row_stats(z, n, &max, &lse);
  // H only when it is needed, as the host: the same value either way, fewer exps.
  const float h = d_ent != 0.0f ? categorical_row_entropy(z, n, max, lse) : 0.0f;
  for (int j = 0; j < n; ++j) {
    const float log_p = z[j] - max - lse;
    const float p = expf(log_p);
    float g = d_logp * ((j == action ? 1.0f : 0.0f) - p);
    if (p > 0.0f) g -= d_ent * p * (log_p + h);
    d_logits[j] = g;
  }
}

// ---------------------------------------------------------------------------------------------
// DiagGaussian: one row of mean (dim) and actions (dim), the shared log_std (dim).

// sum_j [ -z_j^2 / 2 - log_std_j - log(2 pi) / 2 ], z_j = (a_j - mu_j) exp(-log_std_j)
RECUR_HD inline float gaussian_row_log_prob(const float* mean, const float* log_std,
                                            const float* action, int dim) {
  float sum = 0.0f;
  for (int j = 0; j < dim; ++j) {
    const float z = (action[j] - mean[j]) * expf(-log_std[j]);
    sum += -0.5f * z * z - log_std[j] - kGaussianHalfLog2Pi;
  }
  return sum;
}

// sum_j [ 1/2 + log(2 pi) / 2 + log_std_j ]: the same for every row.
RECUR_HD inline float gaussian_entropy(const float* log_std, int dim) {
  float h = 0.0f;
  for (int j = 0; j < dim; ++j) h += 0.5f + kGaussianHalfLog2Pi + log_std[j];
  return h;
}

RECUR_HD inline void gaussian_row_evaluate(const float* mean, const float* log_std,
                                           const float* action, int dim, float* log_prob,
                                           float* entropy) {
  *log_prob = gaussian_row_log_prob(mean, log_std, action, dim);
  *entropy = gaussian_entropy(log_std, dim);
}

// One row of DiagGaussian::backward: d_mean (dim) WRITTEN, and this row's log_std gradient ADDED
// to the float64 accumulators d_log_std_acc (dim), in the host's two steps per element:
//   d_mean_j      = d_logp z_j / sigma_j
//   acc_j        += (double) (d_logp (z_j^2 - 1));   acc_j += (double) d_ent
// A caller that adds the rows in order 0, 1, ... into zeroed accumulators and then does
// d_log_std_j += (float) acc_j reproduces the host exactly; the device reduces them in a tree.
RECUR_HD inline void gaussian_row_backward(const float* mean, const float* log_std,
                                           const float* action, int dim, float d_logp, float d_ent,
                                           float* d_mean, double* d_log_std_acc) {
  for (int j = 0; j < dim; ++j) {
    const float inv_sigma = expf(-log_std[j]);
    const float z = (action[j] - mean[j]) * inv_sigma;  // (a - mu) / sigma
    d_mean[j] = d_logp * z * inv_sigma;
    d_log_std_acc[j] += static_cast<double>(d_logp * (z * z - 1.0f));
    d_log_std_acc[j] += static_cast<double>(d_ent);
  }
}

}  // namespace recur::kernels
