// The epilogue of one Linear layer on the GPU: cuBLAS computes y = x W^T without bias, this
// kernel adds the bias and applies the layer's activation in place. The CUDA policy actor
// (policy/cuda/cuda_policy_actor.h) launches it after every MLP GEMM.
#pragma once

#include <cuda_runtime_api.h>

namespace recur::kernels {

enum class Activation : int { kIdentity, kTanh, kRelu };

// y[r][j] = act(y[r][j] + bias[j]) for r < rows, j < n.   y (rows, n), bias (n)
// tanhf (the accurate library function, no fast math) and max(y, 0), as the CPU Mlp.
void launch_bias_activation(float* y, const float* bias, int rows, int n, Activation activation,
                            cudaStream_t stream);

}  // namespace recur::kernels
