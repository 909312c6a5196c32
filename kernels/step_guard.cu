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

}  // namespace

void launch_step_guard(const double* sums, int m, const PpoLossConfig& config, double max_grad_norm,
                       StepGuard* guard, int* nonfinite_count, cudaStream_t stream) {
  RECUR_CHECK_ARG(m >= 1, "step_guard: m {} (a minibatch has at least one sample)", m);
  RECUR_CHECK_ARG(sums != nullptr && guard != nullptr, "step_guard: sums and guard must be device");
  step_guard_kernel<<<1, 1, 0, stream>>>(sums, m, config, max_grad_norm, guard, nonfinite_count);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace recur::kernels
