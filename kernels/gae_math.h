// GAE of one env column, written once for both devices: the device kernel (kernels/gae.cu, one
// thread per env) and the CPU reference below run this same inline function, which repeats
// agent::compute_gae (agent/ppo/gae.h, the definition of terminated / truncated / reset steps)
// operation for operation: the chain in double, advantages and returns rounded to float. The
// reference is checked against compute_gae bit for bit (tests/kernels/gae_test.cc), so the
// kernel computes what the host updater computes. Plain C++ without nvcc; no CUDA header needed.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/learner_math.h"  // RECUR_HD

namespace recur::kernels {

// The (T, N) time-major rollout arrays GAE reads (last_values is (N)); transition may be null
// (every step is a transition).
struct GaeInputs {
  const float* rewards = nullptr;
  const float* values = nullptr;
  const uint8_t* terminated = nullptr;
  const uint8_t* truncated = nullptr;
  const float* bootstrap_values = nullptr;  // V(final observation) on truncation steps
  const float* last_values = nullptr;       // (N) V after the last step
  const uint8_t* transition = nullptr;
};

// Advantages and returns of env column n (0 <= n < N), backward over T.
RECUR_HD inline void gae_column(int T, int N, int n, float gamma, float lambda, const GaeInputs& in,
                                float* advantages, float* returns) {
  double next_adv = 0;
  for (int t = T - 1; t >= 0; --t) {
    const size_t i = static_cast<size_t>(t) * N + n;
    if (in.transition != nullptr && !in.transition[i]) {
      next_adv = 0;
      advantages[i] = 0;
      returns[i] = in.values[i];
      continue;
    }
    const bool term = in.terminated[i] != 0, trunc = in.truncated[i] != 0;
    double next_value;
    if (term) {
      next_value = 0;
    } else if (trunc) {
      next_value = in.bootstrap_values[i];
    } else {
      next_value = t == T - 1 ? in.last_values[n] : in.values[i + N];
    }
    const double delta = in.rewards[i] + double{gamma} * next_value - in.values[i];
    const double carry = term || trunc ? 0.0 : double{gamma} * lambda * next_adv;
    next_adv = delta + carry;
    advantages[i] = static_cast<float>(next_adv);
    returns[i] = static_cast<float>(next_adv + in.values[i]);
  }
}

// The CPU reference of launch_gae: every column in turn. advantages, returns (T, N) written.
inline void gae_reference(int T, int N, float gamma, float lambda, const GaeInputs& in,
                          float* advantages, float* returns) {
  for (int n = 0; n < N; ++n) gae_column(T, N, n, gamma, lambda, in, advantages, returns);
}

}  // namespace recur::kernels
