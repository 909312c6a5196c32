// The initial recurrent states of a batch of sub-sequences gathered on the device from a
// device-resident table of stored states by one index per sub-sequence (see
// kernels/state_gather_math.h for the layouts). One kernel; enqueued only.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/state_gather_math.h"

namespace recur::kernels {

// table: device, rows of `stride` floats (see state_gather_math.h); rows: device (N), entries
// < 0 give zeros; hx, cx: device (L, N, H), written (cx null: no cell state).
void launch_gather_initial_states(const float* table, size_t stride, const int32_t* rows, int N,
                                  int L, int H, float* hx, float* cx, cudaStream_t stream);

}  // namespace recur::kernels
