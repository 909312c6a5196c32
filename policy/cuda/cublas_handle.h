// A cuBLAS handle bound to one stream, with a workspace of its own allocated up front (so that
// cuBLAS never allocates mid-step, which a CUDA graph capture forbids, and so that two handles
// on two streams never share one: a handle's workspace must not serve concurrent kernels) and
// fp32 FMA math (no TF32: parity with the CPU). Every GEMM of policy/cuda/ runs through one.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/cuda_memory.h"

namespace recur::policy {

class CublasHandle {
 public:
  // On the current device; `stream` must outlive the handle.
  CublasHandle(cudaStream_t stream, size_t workspace_bytes);
  ~CublasHandle();
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;

  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
  kernels::DeviceBuffer<char> workspace_;
};

}  // namespace recur::policy
