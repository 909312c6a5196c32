// GAE, one thread per env column (see gae.h). A column's steps are sequential by definition (A_t
// depends on A_{t+1}); the parallelism is across envs, which the rollout has thousands of.
#include "core/error.h"
#include "kernels/gae.h"

namespace recur::kernels {
namespace {

__global__ void gae_kernel(int T, int N, float gamma, float lambda, GaeInputs in,
                           float* __restrict__ advantages, float* __restrict__ returns) {
  const int n = blockIdx.x * blockDim.x + threadIdx.x;
  if (n < N) gae_column(T, N, n, gamma, lambda, in, advantages, returns);
}

}  // namespace

void launch_gae(int T, int N, float gamma, float lambda, const GaeInputs& in, float* advantages,
                float* returns, cudaStream_t stream) {
  RECUR_CHECK_ARG(T >= 0 && N >= 0, "gae: T {} and N {} must be >= 0", T, N);
  if (T == 0 || N == 0) return;
  RECUR_CHECK_ARG(in.rewards && in.values && in.terminated && in.truncated && in.bootstrap_values &&
                      in.last_values && advantages && returns,
                  "gae: every buffer but transition must be device memory");
  constexpr int kBlock = 128;
  gae_kernel<<<(N + kBlock - 1) / kBlock, kBlock, 0, stream>>>(T, N, gamma, lambda, in, advantages,
                                                               returns);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace recur::kernels
