// One thread: a handful of double operations (see step_guard.h). Compiled without FMA
// contraction (kernels/CMakeLists.txt), as the host compiles the same expression.
#include "core/error.h"
#include "kernels/step_guard.h"

namespace recur::kernels {
namespace {

__global__ void step_guard_kernel(const double* __restrict__ sums, int m, PpoLossConfig config,
                                  double max_grad_norm, StepGuard* __restrict__ guard,
                                  int* __restrict__ nonfinite_count) {
  const StepGuard g = step_guard(sums, m, config, max_grad_norm);
  *guard = g;
  if (g.skip && nonfinite_count != nullptr) ++*nonfinite_count;
}

__global__ void deferred_step_guard_kernel(
    const double* __restrict__ sums, int m, PpoLossConfig config, double max_grad_norm, int stop,
    int tolerate_overflow, const AdamCoefficients* __restrict__ coefficients, int count,
    StepCounter* __restrict__ counter, StepGuard* __restrict__ guard,
    AdamCoefficients* __restrict__ chosen, double* __restrict__ record) {
  for (int k = 0; k < kStepSums; ++k) record[k] = sums[k];
  StepCounter c = *counter;
  const int index = c.applied;
  const StepGuard g =
      deferred_step_guard(sums, m, config, max_grad_norm, stop != 0, tolerate_overflow != 0, c);
  *counter = c;
  *guard = g;
  if (!g.skip) *chosen = coefficients[index < count ? index : count - 1];
}

}  // namespace

void launch_deferred_step_guard(const double* sums, int m, const PpoLossConfig& config,
                                double max_grad_norm, bool stop_on_nonfinite,
                                bool tolerate_overflow, const AdamCoefficients* coefficients,
                                int count, StepCounter* counter, StepGuard* guard,
                                AdamCoefficients* chosen, double* record, cudaStream_t stream) {
  RECUR_CHECK_ARG(m >= 1, "deferred_step_guard: m {} (a minibatch has at least one sample)", m);
  RECUR_CHECK_ARG(count >= 1, "deferred_step_guard: {} Adam coefficients (at least one)", count);
  RECUR_CHECK_ARG(sums != nullptr && coefficients != nullptr && counter != nullptr &&
                      guard != nullptr && chosen != nullptr && record != nullptr,
                  "deferred_step_guard: every pointer must be device memory");
  deferred_step_guard_kernel<<<1, 1, 0, stream>>>(
      sums, m, config, max_grad_norm, stop_on_nonfinite ? 1 : 0, tolerate_overflow ? 1 : 0,
      coefficients, count, counter, guard, chosen, record);
  CUDA_CHECK(cudaGetLastError());
}

void launch_step_guard(const double* sums, int m, const PpoLossConfig& config, double max_grad_norm,
                       StepGuard* guard, int* nonfinite_count, cudaStream_t stream) {
  RECUR_CHECK_ARG(m >= 1, "step_guard: m {} (a minibatch has at least one sample)", m);
  RECUR_CHECK_ARG(sums != nullptr && guard != nullptr, "step_guard: sums and guard must be device");
  step_guard_kernel<<<1, 1, 0, stream>>>(sums, m, config, max_grad_norm, guard, nonfinite_count);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace recur::kernels
