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
RECUR_HD inline double minibatch_loss(const double* sums, int m, const PpoLossConfig& c) {
  const double inv_m = 1.0 / static_cast<double>(m);
  const double policy_loss = sums[0] * inv_m, value_loss = sums[1] * inv_m;
  const double entropy = sums[2] * inv_m;
  return policy_loss + c.vf_coef * value_loss - c.ent_coef * entropy;
}

RECUR_HD inline StepGuard step_guard(const double* sums, int m, const PpoLossConfig& c,
                                     double max_grad_norm) {
  const double loss = minibatch_loss(sums, m, c);
  const double grad_norm = sqrt(sums[5]);
  StepGuard g;
  if (!isfinite(loss) || !isfinite(grad_norm)) {
    g.skip = 1;
    return g;
  }
  g.scale = clip_scale(grad_norm, max_grad_norm);
  return g;
}

// The doubles a minibatch leaves for the guard: 5 loss sums, then the squared gradient norm.
inline constexpr int kStepSums = 6;

// A run of minibatch steps enqueued without a host read between them (the CUDA engine's
// deferred steps, agent/ppo/engine.h): what the steps so far decided, kept on the device.
struct StepCounter {
  int applied = 0;  // steps taken: Adam's step count within the run (skips do not advance it)
  int stopped = 0;  // algo.on_nonfinite: stop saw a non-finite minibatch: every later one skips
};

// step_guard for the next minibatch of a run: as the updater decides it with a host read after
// each minibatch. A non-finite minibatch skips (the updater then warns, or with
// stop_on_nonfinite throws and takes no later step, so the rest of the run skips too).
// tolerate_overflow (fp16 gradients under a loss scale above 1, agent/ppo/loss_scale.h): a
// finite loss with a non-finite gradient norm is the scale's overflow, which the updater answers
// by lowering the scale: that minibatch skips and the run goes on, stop or not.
RECUR_HD inline StepGuard deferred_step_guard(const double* sums, int m, const PpoLossConfig& c,
                                              double max_grad_norm, bool stop_on_nonfinite,
                                              bool tolerate_overflow, StepCounter& counter) {
  if (counter.stopped) {
    StepGuard g;
    g.skip = 1;
    return g;
  }
  const StepGuard g = step_guard(sums, m, c, max_grad_norm);
  if (g.skip) {
    const bool overflow = tolerate_overflow && isfinite(minibatch_loss(sums, m, c));
    if (stop_on_nonfinite && !overflow) counter.stopped = 1;
  } else {
    ++counter.applied;
  }
  return g;
}

}  // namespace recur::kernels
