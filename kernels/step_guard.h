// The minibatch step's decisions on the device (kernels/step_guard_math.h): the non-finite skip
// and the grad-norm clip factor, computed by one tiny kernel from the loss sums and the squared
// gradient norm, kept in device memory and read there by the Adam kernel
// (launch_scale_and_adam's StepGuard overload, kernels/optimizer.h). Non-finite minibatches are
// also counted on the device, so the host can read the count once per update instead of a
// number per minibatch. Enqueued only; nothing synchronizes.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/step_guard_math.h"

namespace recur::kernels {

// *guard = step_guard(sums, m, config, max_grad_norm); when skipped, ++*nonfinite_count (if not
// null). sums: (kPpoSums + 1) doubles, device; guard, nonfinite_count: device, written.
void launch_step_guard(const double* sums, int m, const PpoLossConfig& config, double max_grad_norm,
                       StepGuard* guard, int* nonfinite_count, cudaStream_t stream);

// One minibatch of a deferred run (kernels::deferred_step_guard on *counter): copies the 6 sums
// to `record` (the host reads a run's records at once), writes *guard, and for a step taken
// *chosen = coefficients[counter->applied before the step]: Adam's bias corrections for the
// run's steps 1..count were computed on the host (count entries), and skipped minibatches do
// not advance the index. tolerate_overflow: deferred_step_guard's (an fp16 loss scale's overflow
// skips without stopping). All pointers device; coefficients read-only, the others written.
void launch_deferred_step_guard(const double* sums, int m, const PpoLossConfig& config,
                                double max_grad_norm, bool stop_on_nonfinite,
                                bool tolerate_overflow, const AdamCoefficients* coefficients,
                                int count, StepCounter* counter, StepGuard* guard,
                                AdamCoefficients* chosen, double* record, cudaStream_t stream);

}  // namespace recur::kernels
