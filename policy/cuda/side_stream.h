// A second stream beside a main one, for work that can run next to the main stream's (the
// critic's tower, device.tower_streams 2): its own cuBLAS handle (a handle's workspace must not
// serve two streams at once) and the two events that fork work onto it and join it back. Both
// are stream-ordered: no host wait, and legal inside a CUDA graph capture of the main stream
// (the forked work becomes a parallel branch of the graph).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/cuda_memory.h"
#include "policy/cuda/cublas_handle.h"

namespace recur::policy {

class SideStream {
 public:
  // On the current device.
  explicit SideStream(size_t cublas_workspace_bytes)
      : cublas_(stream_.get(), cublas_workspace_bytes) {}

  cudaStream_t get() const { return stream_.get(); }
  cublasHandle_t cublas() const { return cublas_.get(); }
  // Work enqueued here from now on waits for what `main` has enqueued so far.
  void fork_from(cudaStream_t main) {
    fork_.record(main);
    fork_.wait_in(stream_.get());
  }
  // Work enqueued on `main` from now on waits for what was enqueued here so far.
  void join_into(cudaStream_t main) {
    join_.record(stream_.get());
    join_.wait_in(main);
  }
  void synchronize() const { stream_.synchronize(); }

 private:
  kernels::CudaStream stream_;  // declared first: destroyed after the handle
  CublasHandle cublas_;
  kernels::CudaEvent fork_{cudaEventDisableTiming}, join_{cudaEventDisableTiming};
};

}  // namespace recur::policy
