// The decisions that end a PPO minibatch, written once for both devices: whether the step is
// taken (the loss and the gradient norm are finite) and the global grad-norm clip's factor. The
// host updater decides them from the MinibatchResult the engine returns (agent/ppo/updater.cc:
// `!isfinite(loss) || !isfinite(grad_norm)` skips or stops, kernels::clip_scale clips); the CUDA
// engine decides them on the device with this function (kernels/step_guard.h), from the same
// float64 sums by the same operations, so both agree bit for bit and Adam reads the factor from
// device memory without a host turn. Plain C++ without nvcc.
#pragma once

#include <math.h>

#include "kernels/learner_math.h"

namespace recur::kernels {

// What the step kernel reads: skip the update (nothing is written), else scale the gradients.
struct StepGuard {
  float scale = 1.0f;  // clip_scale(grad_norm, max_grad_norm); 1 when skipped
  int skip = 0;        // 1: the loss or the gradient norm is non-finite
};

// sums: [kPpoSums loss sums (policy, value, entropy, approx_kl, clipped), squared grad norm] as
// launch_ppo_loss and launch_grad_sq_norm write them; m: the minibatch's samples. The loss is
// MinibatchResult::loss exactly as agent/ppo/cuda_engine.cc forms it from the same sums.
RECUR_HD inline StepGuard step_guard(const double* sums, int m, const PpoLossConfig& c,
                                     double max_grad_norm) {
  const double inv_m = 1.0 / static_cast<double>(m);
  const double policy_loss = sums[0] * inv_m, value_loss = sums[1] * inv_m;
  const double entropy = sums[2] * inv_m;
  const double loss = policy_loss + c.vf_coef * value_loss - c.ent_coef * entropy;
  const double grad_norm = sqrt(sums[5]);
  StepGuard g;
  if (!isfinite(loss) || !isfinite(grad_norm)) {
    g.skip = 1;
    return g;
  }
  g.scale = clip_scale(grad_norm, max_grad_norm);
  return g;
}

}  // namespace recur::kernels
