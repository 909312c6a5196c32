// The two elementwise/reduction pieces of a Linear layer's backward on the GPU that cuBLAS does
// not do: the activation's derivative and the bias gradient. The learner's device MLP
// (policy/cuda/cuda_train_mlp.h) launches them around its two backward GEMMs per layer.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/bias_activation.h"

namespace recur::kernels {

// g[r][j] = dy[r][j] * act'(y[r][j]) for r < rows, j < n, written from the layer's activated
// OUTPUT y, as the CPU Mlp (policy/mlp.cc): tanh' = 1 - y^2, relu' = 1 where y > 0 (0 at the
// kink, as PyTorch); kIdentity copies. g may be dy itself (in place).
//   dy (rows, n), y (rows, n), g (rows, n)
void launch_activation_backward(const float* dy, const float* y, int rows, int n,
                                Activation activation, float* g, cudaStream_t stream);

// db[j] += sum over r of g[r][j]: the bias gradient, ADDED as the CPU's. Deterministic: every
// column is summed in one fixed order (no atomics), so two runs agree bitwise.
//   g (rows, n), db (n)
void launch_bias_grad(const float* g, int rows, int n, float* db, cudaStream_t stream);

}  // namespace recur::kernels
