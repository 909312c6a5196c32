// Tanh-squashed continuous actions: the actor heads of the off-policy algorithms (SAC, TD3). The
// math lives here once; the actor (PolicyActor, CUDA actor, ONNX export) and the off-policy
// learner (agent/offpolicy/) all call these functions, so acting and learning agree exactly.
//
// The learner works in normalized action units a in (-1, 1); the env receives
//   env_action = low + 0.5 * (a + 1) * (high - low)        (per dimension, finite bounds)
//
//   kTanhGaussian (SAC): the head outputs 2d values per row, [mean (d), raw log-std (d)];
//     log_std = kLogStdMin + 0.5 * (kLogStdMax - kLogStdMin) * (tanh(raw) + 1)   (CleanRL's SAC)
//     u = mean + exp(log_std) * eps, eps ~ N(0, 1);  a = tanh(u);  deterministic: a = tanh(mean)
//     log pi(a) = sum_j [ -0.5 eps_j^2 - log_std_j - 0.5 log(2 pi) - log(1 - a_j^2 + kTanhEps) ]
//     (the density of the normalized action; the constant log-det of the affine map to the env's
//     bounds is left out, as SB3 does, so the target entropy -d is in normalized units).
//   kTanh (TD3): the head outputs d values per row, the mean; a = tanh(mean) deterministic;
//     exploring: a = clamp(tanh(mean) + exploration_noise * eps, -1, 1), eps ~ N(0, 1).
#pragma once

#include <cmath>
#include <numbers>
#include <string_view>

// The functions below run on the host and, under nvcc, on the device too (the CUDA actor's
// kernel, kernels/action_heads.cu), so that both compute the same formulas from one source.
#ifndef RECUR_HD  // the same definition as kernels/learner_math.h's
#ifdef __CUDACC__
#define RECUR_HD __host__ __device__
#else
#define RECUR_HD
#endif
#endif

namespace recur::policy {

enum class Squash { kNone, kTanhGaussian, kTanh };

// "none", "tanh_gaussian", "tanh"
std::string_view to_string(Squash squash);
// Throws recur::Error listing the allowed names.
Squash parse_squash(std::string_view name);

inline constexpr float kLogStdMin = -5.0f;
inline constexpr float kLogStdMax = 2.0f;
inline constexpr float kTanhEps = 1e-6f;

// Head outputs per row for action_dim d.
RECUR_HD constexpr int squash_head_width(Squash squash, int action_dim) {
  return squash == Squash::kTanhGaussian ? 2 * action_dim : action_dim;
}

template <typename T>
RECUR_HD T squash_log_std(T raw) {
  return T(kLogStdMin) + T(0.5) * T(kLogStdMax - kLogStdMin) * (std::tanh(raw) + T(1));
}
// d log_std / d raw
template <typename T>
RECUR_HD T squash_log_std_grad(T raw) {
  const T t = std::tanh(raw);
  return T(0.5) * T(kLogStdMax - kLogStdMin) * (T(1) - t * t);
}

template <typename T>
RECUR_HD T to_env_action(T a, T low, T high) {
  return low + T(0.5) * (a + T(1)) * (high - low);
}
template <typename T>
RECUR_HD T from_env_action(T x, T low, T high) {
  return T(2) * (x - low) / (high - low) - T(1);
}

// One dimension's term of log pi(a) for a = tanh(u), u = mean + exp(log_std) * eps.
template <typename T>
RECUR_HD T tanh_gaussian_log_prob_term(T eps, T log_std, T a) {
  constexpr T half_log_2pi = T(0.5) * T(1.8378770664093454835606594728112);  // log(2 pi)
  return T(-0.5) * eps * eps - log_std - half_log_2pi - std::log(T(1) - a * a + T(kTanhEps));
}

}  // namespace recur::policy
