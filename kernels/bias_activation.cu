// Bias + activation epilogue of a Linear layer (see bias_activation.h).
#include "core/error.h"
#include "kernels/bias_activation.h"

namespace recur::kernels {
namespace {

constexpr int kBlock = 256;

// One thread per element of y (rows, n), grid-stride.
__global__ void bias_activation_kernel(float* __restrict__ y, const float* __restrict__ bias,
                                       int rows, int n, Activation activation) {
  const size_t total = static_cast<size_t>(rows) * n;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float v = y[i] + bias[i % n];
    switch (activation) {
      case Activation::kIdentity:
        y[i] = v;
        break;
      case Activation::kTanh:
        y[i] = tanhf(v);
        break;
      case Activation::kRelu:
        y[i] = fmaxf(v, 0.0f);
        break;
    }
  }
}

}  // namespace

void launch_bias_activation(float* y, const float* bias, int rows, int n, Activation activation,
                            cudaStream_t stream) {
  const size_t total = static_cast<size_t>(rows) * n;
  if (total == 0) return;
  const size_t blocks = (total + kBlock - 1) / kBlock;
  const int grid = static_cast<int>(blocks < 65535 ? blocks : 65535);
  bias_activation_kernel<<<grid, kBlock, 0, stream>>>(y, bias, rows, n, activation);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace recur::kernels
