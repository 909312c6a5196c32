// Gradient norm and Adam over parameter segments (see optimizer.h). Both kernels walk the
// segments in order with one grid-stride loop each; the grid is a function of the sizes only, so
// the norm's summation tree, hence its bits, are the same on every run and GPU.
#include "core/error.h"
#include "kernels/block_reduce.cuh"
#include "kernels/optimizer.h"

namespace recur::kernels {
namespace {

using detail::kReduceBlock;

constexpr int kAdamBlock = 256;
constexpr int kMaxAdamBlocks = 4096;  // grid-stride loops cover larger segments

// Stage 1 of sum g^2 over all segments: partials (gridDim.x).
__global__ void grad_sq_norm_kernel(ParamSegments segments, double* __restrict__ partials) {
  __shared__ double sh[kReduceBlock];
  const long long first = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  double acc = 0.0;
  for (int s = 0; s < segments.count; ++s) {
    const float* g = segments.segment[s].grads;
    for (long long i = first; i < segments.segment[s].n; i += stride) {
      const double x = g[i];
      acc += x * x;
    }
  }
  const double total = detail::block_sum(acc, sh);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

// grad_scale is *guard's when guard is given (and nothing happens when it says skip);
// coefficients are *device_coefficients when given.
__global__ void scale_and_adam_kernel(ParamSegments segments, float grad_scale,
                                      const StepGuard* __restrict__ guard,
                                      AdamCoefficients coefficients,
                                      const AdamCoefficients* __restrict__ device_coefficients) {
  if (guard != nullptr) {
    if (guard->skip) return;
    grad_scale = guard->scale;
  }
  if (device_coefficients != nullptr) coefficients = *device_coefficients;
  const long long first = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const bool scaled = grad_scale != 1.0f;
  for (int s = 0; s < segments.count; ++s) {
    const ParamSegment seg = segments.segment[s];
    for (long long i = first; i < seg.n; i += stride) {
      float g = seg.grads[i];
      if (scaled) {
        g *= grad_scale;
        seg.grads[i] = g;
      }
      adam_element(seg.values[i], g, seg.m[i], seg.v[i], coefficients);
    }
  }
}

// Checks the segment table and returns its total and largest sizes.
void check_segments(const ParamSegments& segments, const char* what, long long& total,
                    long long& largest) {
  RECUR_CHECK_ARG(segments.count >= 0 && segments.count <= kMaxParamSegments,
                  "{}: {} segments (at most {})", what, segments.count, kMaxParamSegments);
  total = largest = 0;
  for (int s = 0; s < segments.count; ++s) {
    const long long n = segments.segment[s].n;
    RECUR_CHECK_ARG(n >= 0, "{}: segment {} has {} elements", what, s, n);
    total += n;
    largest = n > largest ? n : largest;
  }
}

}  // namespace

void launch_grad_sq_norm(const ParamSegments& segments, double* sq_norm, double* scratch,
                         cudaStream_t stream) {
  long long total, largest;
  check_segments(segments, "grad_sq_norm", total, largest);
  if (total == 0) {
    CUDA_CHECK(cudaMemsetAsync(sq_norm, 0, sizeof(double), stream));
    return;
  }
  // The grid follows the largest segment (each loop over a segment starts at the same thread).
  const int grid = detail::reduce_grid(largest);
  grad_sq_norm_kernel<<<grid, kReduceBlock, 0, stream>>>(segments, scratch);
  CUDA_CHECK(cudaGetLastError());
  detail::launch_sum_partials(scratch, grid, 1, sq_norm, nullptr, stream);
}

void launch_scale_and_adam(const ParamSegments& segments, float grad_scale,
                           const AdamCoefficients& coefficients, cudaStream_t stream) {
  long long total, largest;
  check_segments(segments, "scale_and_adam", total, largest);
  if (total == 0) return;
  const int grid = detail::reduce_grid(largest, kAdamBlock, kMaxAdamBlocks);
  scale_and_adam_kernel<<<grid, kAdamBlock, 0, stream>>>(segments, grad_scale, nullptr,
                                                         coefficients, nullptr);
  CUDA_CHECK(cudaGetLastError());
}

void launch_scale_and_adam(const ParamSegments& segments, const StepGuard* guard,
                           const AdamCoefficients& coefficients, cudaStream_t stream) {
  RECUR_CHECK_ARG(guard != nullptr, "scale_and_adam: the step guard must be device memory");
  long long total, largest;
  check_segments(segments, "scale_and_adam", total, largest);
  if (total == 0) return;
  const int grid = detail::reduce_grid(largest, kAdamBlock, kMaxAdamBlocks);
  scale_and_adam_kernel<<<grid, kAdamBlock, 0, stream>>>(segments, 1.0f, guard, coefficients,
                                                         nullptr);
  CUDA_CHECK(cudaGetLastError());
}

void launch_scale_and_adam(const ParamSegments& segments, const StepGuard* guard,
                           const AdamCoefficients* coefficients, cudaStream_t stream) {
  RECUR_CHECK_ARG(guard != nullptr && coefficients != nullptr,
                  "scale_and_adam: the step guard and the coefficients must be device memory");
  long long total, largest;
  check_segments(segments, "scale_and_adam", total, largest);
  if (total == 0) return;
  const int grid = detail::reduce_grid(largest, kAdamBlock, kMaxAdamBlocks);
  scale_and_adam_kernel<<<grid, kAdamBlock, 0, stream>>>(segments, 1.0f, guard, AdamCoefficients{},
                                                         coefficients);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace recur::kernels
