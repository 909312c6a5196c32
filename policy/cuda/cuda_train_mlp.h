// An Mlp (policy/mlp.h) for the GPU learner: forward that keeps every layer's output, and
// backward, both on device pointers. Parameters and gradients live in two device buffers of the
// host Mlp's flat layout (per layer weight (out, in) row-major, then bias (out)) at fixed
// addresses, so the learner's elementwise Adam runs over them as over the host's.
//
// Per layer k (in = widths[k], out = widths[k+1]), batch of n rows, row-major:
//   forward   y_k = act(y_{k-1} W_k^T + b_k)      y_{-1} = x (n, in), y_k (n, out)
//   backward  g   = dy_k * act'(y_k)               from the stored OUTPUT y_k (as the CPU)
//             dW_k += g^T y_{k-1}                  one SGEMM, beta = 1 (gradients ADD)
//             db_k += column sums of g             kernels::launch_bias_grad (deterministic)
//             dy_{k-1} = g W_k                     one SGEMM, beta = 0 (dx is WRITTEN)
// The last layer has no activation unless spec.activate_output.
//
// Numerics: FP32 cuBLAS under CUBLAS_DEFAULT_MATH (the caller's handle; no TF32), so results
// equal the CPU Mlp's up to summation order (~1e-7 relative per GEMM). Runs are bitwise
// repeatable on one GPU (cuBLAS is, the kernels use no atomics).
//
// Memory: the stored outputs and the backward scratch hold as many rows as the largest forward
// so far; a forward of no more rows allocates nothing, and backward never allocates (both can
// be captured in a CUDA graph once the buffers have grown).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <span>
#include <vector>

#include "kernels/cuda_memory.h"
#include "policy/mlp.h"

namespace recur::policy {

class CudaTrainMlp {
 public:
  // Parameters and gradients allocated here, zeros (the constructor waits for the zeroing).
  CudaTrainMlp(const MlpSpec& spec, cudaStream_t stream);

  const MlpSpec& spec() const { return spec_; }
  size_t num_parameters() const { return params_.size(); }
  float* params() { return params_.data(); }  // (num_parameters) Mlp::parameters() layout
  const float* params() const { return params_.data(); }
  float* grads() { return grads_.data(); }  // (num_parameters) same layout
  const float* grads() const { return grads_.data(); }

  // Host <-> device copies of the flat parameters (Mlp::parameters() layout; sizes must equal
  // num_parameters()); each waits for `stream`.
  void upload(std::span<const float> params, cudaStream_t stream);
  void download(std::span<float> params, cudaStream_t stream) const;
  void download_gradients(std::span<float> grads, cudaStream_t stream) const;
  void zero_gradients(cudaStream_t stream);

  // Enqueues the forward of n rows: x (n, input) on the device, NOT copied: it must stay valid
  // and unchanged until the matching backward(). Returns the output (n, output), owned here,
  // valid until the next forward. cublas must be bound to `stream` (cublasSetStream).
  const float* forward(cublasHandle_t cublas, int n, const float* x, cudaStream_t stream);
  // Enqueues the backward of the last forward: dy (n, output) on the device, read only.
  // Parameter gradients are ADDED to grads(); dx (n, input) is WRITTEN unless dx == nullptr.
  // dx must not alias dy or the forward's output.
  void backward(cublasHandle_t cublas, const float* dy, float* dx, cudaStream_t stream);

 private:
  bool activated(int k) const { return k + 1 < spec_.num_layers() || spec_.activate_output; }
  int width(int k) const { return spec_.widths[static_cast<size_t>(k)]; }
  void grow(int n);

  MlpSpec spec_;
  std::vector<size_t> offsets_;  // layer k's weight at params_[offsets_[k]] (and grads_)
  kernels::DeviceBuffer<float> params_, grads_;

  // The last forward: n rows, its input (the caller's) and every layer's activated output.
  int capacity_ = 0;  // rows the buffers below hold
  int last_n_ = -1;   // -1: no forward yet
  const float* x_ = nullptr;
  std::vector<kernels::DeviceBuffer<float>> outs_;  // layer k: (capacity_, widths[k+1])
  // Backward scratch, (capacity_, widest): g of the current layer, and the gradient w.r.t. its
  // input (the next layer down's dy). dy itself is never written.
  kernels::DeviceBuffer<float> g_, dinput_;
};

}  // namespace recur::policy
