// Categorical, diagonal-Gaussian and tanh-squashed action heads (see action_heads.h). One thread
// per slot: the action spaces of recur's envs are small (n, d <= ~20), and the serial per-row
// loops keep the CPU's summation order.
#include <curand_kernel.h>

#include "core/error.h"
#include "kernels/action_heads.h"
// Header-only math with host and device annotations: the squash formulas exist once, shared with
// policy::TanhGaussian and the off-policy learner (the one include of policy/ in kernels/).
#include "policy/squashed_action.h"

namespace recur::kernels {
namespace {

constexpr int kBlock = 128;
constexpr float kHalfLog2Pi = 0.918938533204672741780329736406f;  // log(2 pi) / 2

int grid_for(int batch) {
  return (batch + kBlock - 1) / kBlock;
}

// One thread per slot b.
__global__ void categorical_head_kernel(const float* __restrict__ logits, int batch, int n,
                                        const uint64_t* __restrict__ seed,
                                        const uint32_t* __restrict__ deterministic,
                                        float* __restrict__ actions,
                                        float* __restrict__ log_probs) {
  const int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= batch) return;
  const float* z = logits + static_cast<size_t>(b) * n;
  float max = -INFINITY;
  for (int j = 0; j < n; ++j) max = fmaxf(max, z[j]);
  float sum = 0.0f;
  for (int j = 0; j < n; ++j) sum += expf(z[j] - max);
  const float lse = logf(sum);
  int chosen = 0;
  if (*deterministic) {
    for (int j = 1; j < n; ++j)
      if (z[j] > z[chosen]) chosen = j;
  } else {
    curandStatePhilox4_32_10_t state;
    curand_init(static_cast<unsigned long long>(*seed), static_cast<unsigned long long>(b), 0ULL,
                &state);
    const double u = 1.0 - curand_uniform_double(&state);  // (0, 1] -> [0, 1)
    double cumulative = 0.0;
    int found = -1, last_possible = 0;
    for (int j = 0; j < n && found < 0; ++j) {
      const double p = exp(static_cast<double>(z[j] - max - lse));
      if (p <= 0.0) continue;
      last_possible = j;
      cumulative += p;
      if (u < cumulative) found = j;
    }
    chosen = found >= 0 ? found : last_possible;
  }
  actions[b] = static_cast<float>(chosen);
  log_probs[b] = z[chosen] - max - lse;
}

// One thread per slot b.
__global__ void gaussian_head_kernel(const float* __restrict__ mean,
                                     const float* __restrict__ log_std, int batch, int dim,
                                     const uint64_t* __restrict__ seed,
                                     const uint32_t* __restrict__ deterministic,
                                     float* __restrict__ actions, float* __restrict__ log_probs) {
  const int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= batch) return;
  const size_t row = static_cast<size_t>(b) * dim;
  const bool mode = *deterministic != 0;
  curandStatePhilox4_32_10_t state;
  if (!mode)
    curand_init(static_cast<unsigned long long>(*seed), static_cast<unsigned long long>(b), 0ULL,
                &state);
  float sum = 0.0f;
  for (int j = 0; j < dim; ++j) {
    const float mu = mean[row + j];
    float a = mu;
    if (!mode) {
      const double sigma = exp(static_cast<double>(log_std[j]));
      a = static_cast<float>(static_cast<double>(mu) + sigma * curand_normal_double(&state));
    }
    actions[row + j] = a;
    const float z = (a - mu) * expf(-log_std[j]);
    sum += -0.5f * z * z - log_std[j] - kHalfLog2Pi;
  }
  log_probs[b] = sum;
}

// One thread per slot b. kGaussian: a row of head is [mean (d), raw log-std (d)] (SAC's actor);
// otherwise the mean (d) with exploration noise (TD3's).
template <bool kGaussian>
__global__ void squashed_head_kernel(const float* __restrict__ head, const float* __restrict__ low,
                                     const float* __restrict__ high, int batch, int dim,
                                     float noise, const uint64_t* __restrict__ seed,
                                     const uint32_t* __restrict__ deterministic,
                                     float* __restrict__ actions, float* __restrict__ log_probs) {
  const int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= batch) return;
  const float* row = head + static_cast<size_t>(b) * (kGaussian ? 2 * dim : dim);
  const bool mode = *deterministic != 0;
  curandStatePhilox4_32_10_t state;
  if (!mode)
    curand_init(static_cast<unsigned long long>(*seed), static_cast<unsigned long long>(b), 0ULL,
                &state);
  float sum = 0.0f;
  for (int j = 0; j < dim; ++j) {
    float a;
    if (kGaussian) {
      const float log_std = policy::squash_log_std(row[dim + j]);
      const double eps = mode ? 0.0 : curand_normal_double(&state);
      const double sigma = exp(static_cast<double>(log_std));
      a = std::tanh(static_cast<float>(static_cast<double>(row[j]) + sigma * eps));
      sum += policy::tanh_gaussian_log_prob_term(static_cast<float>(eps), log_std, a);
    } else {
      a = std::tanh(row[j]);
      if (!mode) {
        const double explored =
            static_cast<double>(a) + static_cast<double>(noise) * curand_normal_double(&state);
        a = static_cast<float>(fmin(fmax(explored, -1.0), 1.0));
      }
    }
    const float x = policy::to_env_action(a, low[j], high[j]);
    actions[static_cast<size_t>(b) * dim + j] = fminf(fmaxf(x, low[j]), high[j]);
  }
  log_probs[b] = sum;  // 0 without kGaussian: a deterministic policy has no density
}

}  // namespace

void launch_categorical_head(const float* logits, int batch, int n, const uint64_t* seed,
                             const uint32_t* deterministic, float* actions, float* log_probs,
                             cudaStream_t stream) {
  if (batch <= 0) return;
  categorical_head_kernel<<<grid_for(batch), kBlock, 0, stream>>>(
      logits, batch, n, seed, deterministic, actions, log_probs);
  CUDA_CHECK(cudaGetLastError());
}

void launch_gaussian_head(const float* mean, const float* log_std, int batch, int dim,
                          const uint64_t* seed, const uint32_t* deterministic, float* actions,
                          float* log_probs, cudaStream_t stream) {
  if (batch <= 0) return;
  gaussian_head_kernel<<<grid_for(batch), kBlock, 0, stream>>>(mean, log_std, batch, dim, seed,
                                                               deterministic, actions, log_probs);
  CUDA_CHECK(cudaGetLastError());
}

void launch_tanh_gaussian_head(const float* head, const float* low, const float* high, int batch,
                               int dim, const uint64_t* seed, const uint32_t* deterministic,
                               float* actions, float* log_probs, cudaStream_t stream) {
  if (batch <= 0) return;
  squashed_head_kernel<true><<<grid_for(batch), kBlock, 0, stream>>>(
      head, low, high, batch, dim, 0.0f, seed, deterministic, actions, log_probs);
  CUDA_CHECK(cudaGetLastError());
}

void launch_tanh_head(const float* mean, const float* low, const float* high, int batch, int dim,
                      float noise, const uint64_t* seed, const uint32_t* deterministic,
                      float* actions, float* log_probs, cudaStream_t stream) {
  if (batch <= 0) return;
  squashed_head_kernel<false><<<grid_for(batch), kBlock, 0, stream>>>(
      mean, low, high, batch, dim, noise, seed, deterministic, actions, log_probs);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace recur::kernels
