// The device forward of an Mlp (see cuda_mlp.h).
#include "policy/cuda/cuda_mlp.h"

#include <algorithm>

#include "core/error.h"
#include "kernels/bias_activation.h"

namespace recur::policy {

CudaMlp::CudaMlp(const MlpSpec& spec, int rows, cudaStream_t stream) : spec_(spec), rows_(rows) {
  spec_.validate();
  RECUR_CHECK_ARG(rows >= 1, "CudaMlp needs at least one row, got {}", rows);
  size_t total = 0;
  int widest_hidden = 1;
  for (int k = 0; k < spec_.num_layers(); ++k) {
    const int in = spec_.widths[static_cast<size_t>(k)];
    const int out = spec_.widths[static_cast<size_t>(k) + 1];
    offsets_.push_back(total);
    total += Linear::num_parameters(in, out);
    if (k + 1 < spec_.num_layers()) widest_hidden = std::max(widest_hidden, out);
  }
  params_.resize(total);
  params_.zero(stream);
  const size_t scratch = static_cast<size_t>(rows) * static_cast<size_t>(widest_hidden);
  ping_.resize(scratch);
  pong_.resize(scratch);
  ping_.zero(stream);
  pong_.zero(stream);
}

void CudaMlp::upload(const Mlp& mlp, cudaStream_t stream) {
  RECUR_ASSERT(mlp.spec().widths == spec_.widths);
  RECUR_ASSERT(mlp.num_parameters() == params_.size());
  params_.upload(mlp.parameters(), stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
}

void CudaMlp::enqueue(cublasHandle_t cublas, const float* x, float* y, cudaStream_t stream) {
  constexpr float kOne = 1.0f, kZero = 0.0f;
  const int L = spec_.num_layers();
  const float* in_ptr = x;
  for (int k = 0; k < L; ++k) {
    const int in = spec_.widths[static_cast<size_t>(k)];
    const int out = spec_.widths[static_cast<size_t>(k) + 1];
    const bool last = k + 1 == L;
    float* out_ptr = last ? y : (k % 2 == 0 ? ping_.data() : pong_.data());
    const float* w = params_.data() + offsets_[static_cast<size_t>(k)];  // (out, in) row-major
    const float* bias = w + static_cast<size_t>(out) * static_cast<size_t>(in);
    // y (B, out) = x (B, in) W^T, row-major. Column-major views: y^T (out, B), x^T (in, B), and
    // W row-major (out, in) is W^T (in, out) column-major, so y^T = op_T(W^T) x^T.
    CUBLAS_CHECK(cublasSgemm(cublas, CUBLAS_OP_T, CUBLAS_OP_N, out, rows_, in, &kOne, w, in, in_ptr,
                             in, &kZero, out_ptr, out));
    kernels::Activation act = kernels::Activation::kIdentity;
    if (!last || spec_.activate_output)
      act = spec_.activation == Activation::kTanh ? kernels::Activation::kTanh
                                                  : kernels::Activation::kRelu;
    kernels::launch_bias_activation(out_ptr, bias, rows_, out, act, stream);
    in_ptr = out_ptr;
  }
}

}  // namespace recur::policy
