#include "policy/cuda/cublas_handle.h"

#include "core/error.h"

namespace recur::policy {

CublasHandle::CublasHandle(cudaStream_t stream, size_t workspace_bytes) {
  CUBLAS_CHECK(cublasCreate(&handle_));
  try {
    CUBLAS_CHECK(cublasSetStream(handle_, stream));  // resets the workspace: set it after
    workspace_.resize(workspace_bytes);
    CUBLAS_CHECK(cublasSetWorkspace(handle_, workspace_.data(), workspace_.bytes()));
    CUBLAS_CHECK(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH));  // fp32 FMA, no TF32
  } catch (...) {
    cublasDestroy(handle_);
    throw;
  }
}

CublasHandle::~CublasHandle() {
  if (handle_) cublasDestroy(handle_);
}

}  // namespace recur::policy
