// Small elementwise kernels of the device learner.
#pragma once

#include <cuda_runtime_api.h>

namespace recur::kernels {

// y[i] += x[i] for i < n: the shared core's output gradient is the sum of what the actor head and
// the critic head send back.   y (n), x (n)
void launch_add_inplace(float* y, const float* x, long long n, cudaStream_t stream);

}  // namespace recur::kernels
