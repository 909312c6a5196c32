// The elementwise math of a PPO update, written ONCE for both devices: the host updater
// (agent/ppo/engine.cc, agent/adam.cc) and the device learner's kernels call these same inline
// functions, so the CPU and GPU learners cannot drift apart formula by formula. Plain C++ when
// compiled by the host compiler (CPU-only builds and CI include it); __host__ __device__ under
// nvcc. No CUDA header is needed.
//
// Precision follows the CPU updater: the loss terms in double, the gradients handed to the
// network in float, Adam's moments and update in float (as torch.optim.Adam in float32).
#pragma once

#include <math.h>

#ifdef __CUDACC__
#define RECUR_HD __host__ __device__
#else
#define RECUR_HD
#endif

namespace recur::kernels {

// PPO's loss coefficients for one minibatch (clip ranges already scheduled).
struct PpoLossConfig {
  double clip_range = 0.2;
  double clip_range_vf = 0;  // <= 0: unclipped value loss
  double vf_coef = 0.5;
  double ent_coef = 0.0;
};

// One sample's share of the minibatch loss, before the 1/m of the mean, and the gradients of the
// MEAN loss w.r.t. this sample's log-prob and value (already scaled by inv_m and the coefficients).
struct PpoElement {
  double policy_loss = 0;  // max(-A r, -A clip(r, 1-eps, 1+eps))
  double value_loss = 0;   // 0.5 (v - R)^2, or the max with the clipped value's
  double approx_kl = 0;    // (r - 1) - log r, the low-variance estimator
  double clipped = 0;      // 1 when |r - 1| > eps
  float d_logp = 0, d_value = 0;
};

RECUR_HD inline PpoElement ppo_element(float logp, float old_logp, float advantage, float value,
                                       float old_value, float ret, const PpoLossConfig& c,
                                       double inv_m) {
  PpoElement e;
  const double log_ratio = static_cast<double>(logp) - static_cast<double>(old_logp);
  const double ratio = exp(log_ratio);
  const double a = advantage;
  const double lo = 1.0 - c.clip_range, hi = 1.0 + c.clip_range;
  const double clamped = ratio < lo ? lo : (ratio > hi ? hi : ratio);
  const double l1 = -a * ratio, l2 = -a * clamped;
  e.policy_loss = l1 > l2 ? l1 : l2;
  // d max(l1, l2) / d ratio: the unclipped branch, unless the clipped one is larger (then the
  // ratio is outside the range and the gradient is 0). d ratio / d logp = ratio.
  const double dl_dratio = l1 >= l2 ? -a : 0.0;
  e.d_logp = static_cast<float>(dl_dratio * ratio * inv_m);
  e.clipped = fabs(ratio - 1.0) > c.clip_range ? 1.0 : 0.0;
  e.approx_kl = (ratio - 1.0) - log_ratio;
  const double v = value, R = ret, v_old = old_value;
  if (c.clip_range_vf > 0) {
    const double dv_raw = v - v_old;
    const double dv_clamped = dv_raw < -c.clip_range_vf
                                  ? -c.clip_range_vf
                                  : (dv_raw > c.clip_range_vf ? c.clip_range_vf : dv_raw);
    const double vc = v_old + dv_clamped;
    const double e1 = (v - R) * (v - R), e2 = (vc - R) * (vc - R);
    e.value_loss = 0.5 * (e1 > e2 ? e1 : e2);
    // The clipped branch passes gradient only while v is inside the clip range.
    const bool inside = fabs(v - v_old) < c.clip_range_vf;
    const double dv = e1 >= e2 ? (v - R) : (inside ? (vc - R) : 0.0);
    e.d_value = static_cast<float>(c.vf_coef * dv * inv_m);
  } else {
    e.value_loss = 0.5 * (v - R) * (v - R);
    e.d_value = static_cast<float>(c.vf_coef * (v - R) * inv_m);
  }
  return e;
}

// algo.async_anchor (agent/ppo/updater.cc): the truncated importance weight of the behaviour
// policy that collected a sample against the proximal policy its ratio is now taken to,
// min(1, exp(proximal - behaviour)) on log-probs; the sample's advantage is scaled by it.
RECUR_HD inline float anchor_weight(float proximal_logp, float behaviour_logp) {
  return fminf(1.0f, expf(proximal_logp - behaviour_logp));
}

// The per-step constants of Adam (torch.optim.Adam, no weight decay, no amsgrad):
//   p -= lr / bc1 * m / (sqrt(v) / sqrt(bc2) + eps),  bc_i = 1 - beta_i^t
struct AdamCoefficients {
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-5f;
  float step_size = 0;     // lr / bc1
  float inv_sqrt_bc2 = 1;  // 1 / sqrt(bc2)
};

// Bias corrections for update number t (>= 1), computed in double as the CPU always did.
inline AdamCoefficients adam_coefficients(float beta1, float beta2, float eps, double lr,
                                          long long t) {
  AdamCoefficients a;
  a.beta1 = beta1;
  a.beta2 = beta2;
  a.eps = eps;
  const double bc1 = 1.0 - pow(static_cast<double>(beta1), static_cast<double>(t));
  const double bc2 = 1.0 - pow(static_cast<double>(beta2), static_cast<double>(t));
  a.step_size = static_cast<float>(lr / bc1);
  a.inv_sqrt_bc2 = static_cast<float>(1.0 / sqrt(bc2));
  return a;
}

// One parameter's Adam update from its gradient g.
RECUR_HD inline void adam_element(float& p, float g, float& m, float& v,
                                  const AdamCoefficients& a) {
  m = a.beta1 * m + (1.0f - a.beta1) * g;
  v = a.beta2 * v + (1.0f - a.beta2) * g * g;
  p -= a.step_size * m / (sqrtf(v) * a.inv_sqrt_bc2 + a.eps);
}

// The global grad-norm clip's factor (torch.nn.utils.clip_grad_norm_): 1 when the norm is within
// max_norm or not finite (a non-finite norm skips the update instead; see agent/ppo/updater.h).
// Also run on the device (kernels/step_guard.h), so that the clip needs no host turn.
RECUR_HD inline float clip_scale(double norm, double max_norm) {
  if (!(norm > max_norm) || !isfinite(norm)) return 1.0f;
  return static_cast<float>(max_norm / (norm + 1e-6));
}

}  // namespace recur::kernels
