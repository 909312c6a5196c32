// The optimizer step of the device learner: the global gradient norm (for the clip) and Adam,
// over a handful of flat parameter segments (the policy's parameter groups: the shared core, the
// heads, log_std). Adam's per-element update is kernels::adam_element (kernels/learner_math.h),
// the function the host Adam (agent/adam.cc) calls, so both learners update parameters alike.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/learner_math.h"
#include "kernels/step_guard_math.h"

namespace recur::kernels {

// One flat parameter tensor and its gradient and Adam moments, all device pointers of n floats.
// n may be 0 (the pointers are then not read).
struct ParamSegment {
  float* values = nullptr;
  float* grads = nullptr;
  float* m = nullptr;
  float* v = nullptr;
  long long n = 0;
};

inline constexpr int kMaxParamSegments = 16;

// Up to kMaxParamSegments segments, passed BY VALUE to the kernels (one launch covers them all,
// without a device-side table to keep in sync).
struct ParamSegments {
  ParamSegment segment[kMaxParamSegments];
  int count = 0;
};

// *sq_norm = sum over all segments of grads[i]^2, each square and the sum in float64 (as
// agent::global_grad_norm), by the deterministic reduction of kernels/reduction.h. 0 when there
// are no elements.
//   sq_norm (1 double, WRITTEN), scratch (kReductionScratch doubles)
void launch_grad_sq_norm(const ParamSegments& segments, double* sq_norm, double* scratch,
                         cudaStream_t stream);

// For every element of every segment: g = grads[i] * grad_scale, stored back into grads (as
// agent::clip_grad_norm does) only when grad_scale != 1; then
// adam_element(values[i], g, m[i], v[i], coefficients). grad_scale is kernels::clip_scale's
// factor, computed on the host from the norm (or 1 without a clip).
void launch_scale_and_adam(const ParamSegments& segments, float grad_scale,
                           const AdamCoefficients& coefficients, cudaStream_t stream);

// The same with the factor and the skip decided on the device (kernels/step_guard.h): when
// guard->skip is set nothing is written (parameters, gradients and moments stay as they were);
// else as above with grad_scale = guard->scale. guard: device, read when the kernel runs.
void launch_scale_and_adam(const ParamSegments& segments, const StepGuard* guard,
                           const AdamCoefficients& coefficients, cudaStream_t stream);

// The same with Adam's coefficients also in device memory (the deferred steps: the step guard
// picks them by the count of steps taken, kernels/step_guard.h). guard, coefficients: device,
// read when the kernel runs.
void launch_scale_and_adam(const ParamSegments& segments, const StepGuard* guard,
                           const AdamCoefficients* coefficients, cudaStream_t stream);

}  // namespace recur::kernels
