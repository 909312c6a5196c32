// GAE on the device: one thread per env column walks the column backward over T, running
// kernels::gae_column (kernels/gae_math.h), the function the CPU reference runs, which repeats
// agent::compute_gae. Enqueued only; nothing comes back to the host.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/gae_math.h"

namespace recur::kernels {

// in: device pointers of (T, N) arrays (last_values (N); transition may be null). advantages,
// returns: device (T, N), written.
void launch_gae(int T, int N, float gamma, float lambda, const GaeInputs& in, float* advantages,
                float* returns, cudaStream_t stream);

}  // namespace recur::kernels
