// An Mlp's forward pass on the GPU, for the CUDA policy actor: the parameters of a host Mlp
// (policy/mlp.h: per layer weight (out, in) row-major, then bias (out), in one flat buffer) copied
// to one device buffer of the same layout at a fixed address, and per layer one cuBLAS SGEMM
// (y = x W^T) plus one bias_activation kernel. Forward only, no stored activations.
//
// The order of float operations differs from the CPU's (the CPU starts from the bias and
// accumulates x W^T; here the GEMM result gets the bias after): ~1 ulp per layer.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <vector>

#include "kernels/cuda_memory.h"
#include "policy/mlp.h"

namespace recur::policy {

class CudaMlp {
 public:
  // Device buffers for the parameters and for batches of `rows` rows (zeros until upload()).
  CudaMlp(const MlpSpec& spec, int rows, cudaStream_t stream);

  const MlpSpec& spec() const { return spec_; }
  // Copies mlp's parameters (same spec) to the device on `stream` and waits for the copy.
  void upload(const Mlp& mlp, cudaStream_t stream);
  // The device parameters (Mlp's flat layout, fixed address), for device-to-device loads.
  float* parameters() { return params_.data(); }
  size_t num_parameters() const { return params_.size(); }

  // Enqueues y (B, output) = mlp(x (B, input)), both device pointers, B = the rows given at
  // construction; cublas must be bound to `stream`. y must not alias the internal ping-pong.
  void enqueue(cublasHandle_t cublas, const float* x, float* y, cudaStream_t stream);

 private:
  MlpSpec spec_;
  int rows_;
  std::vector<size_t> offsets_;               // layer k's weight at params_[offsets_[k]]
  kernels::DeviceBuffer<float> params_;       // the Mlp's flat layout
  kernels::DeviceBuffer<float> ping_, pong_;  // (B, widest hidden layer) intermediate outputs
};

}  // namespace recur::policy
