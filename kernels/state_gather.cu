// One thread per element of hx (and the same element of cx): see state_gather.h. A pure copy:
// the results equal the CPU reference bit for bit.
#include "core/error.h"
#include "kernels/state_gather.h"

namespace recur::kernels {
namespace {

__global__ void gather_initial_states_kernel(const float* __restrict__ table, size_t stride,
                                             const int32_t* __restrict__ rows, int N, int L, int H,
                                             float* __restrict__ hx, float* __restrict__ cx) {
  const size_t total = static_cast<size_t>(L) * N * H;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const int j = static_cast<int>(i % H);
    const int n = static_cast<int>((i / H) % N);
    const int k = static_cast<int>(i / (static_cast<size_t>(H) * N));
    hx[i] = initial_state_at(table, stride, rows, L, H, false, k, n, j);
    if (cx != nullptr) cx[i] = initial_state_at(table, stride, rows, L, H, true, k, n, j);
  }
}

}  // namespace

void launch_gather_initial_states(const float* table, size_t stride, const int32_t* rows, int N,
                                  int L, int H, float* hx, float* cx, cudaStream_t stream) {
  RECUR_CHECK_ARG(N >= 0 && L >= 1 && H >= 1, "gather_initial_states: N {}, L {}, H {}", N, L, H);
  const size_t total = static_cast<size_t>(L) * N * H;
  if (total == 0) return;
  RECUR_CHECK_ARG(table != nullptr && rows != nullptr && hx != nullptr,
                  "gather_initial_states: table, rows and hx must be device memory");
  RECUR_CHECK_ARG(stride >= static_cast<size_t>(cx != nullptr ? 2 * L : L) * H,
                  "gather_initial_states: row stride {} is shorter than a state ({} floats)",
                  stride, static_cast<size_t>(cx != nullptr ? 2 * L : L) * H);
  constexpr int kBlock = 256;
  const size_t blocks = (total + kBlock - 1) / kBlock;
  const int grid = static_cast<int>(blocks < 65535 ? blocks : 65535);  // grid-stride covers more
  gather_initial_states_kernel<<<grid, kBlock, 0, stream>>>(table, stride, rows, N, L, H, hx, cx);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace recur::kernels
