// The learner's device MLP (see cuda_train_mlp.h).
#include "policy/cuda/cuda_train_mlp.h"

#include <algorithm>

#include "core/error.h"
#include "kernels/bias_activation.h"
#include "kernels/mlp_backward.h"

namespace recur::policy {
namespace {

size_t rows_times(int n, int width) {
  return static_cast<size_t>(n) * static_cast<size_t>(width);
}

kernels::Activation device_activation(Activation a) {
  return a == Activation::kTanh ? kernels::Activation::kTanh : kernels::Activation::kRelu;
}

}  // namespace

CudaTrainMlp::CudaTrainMlp(const MlpSpec& spec, cudaStream_t stream) : spec_(spec) {
  spec_.validate();
  size_t total = 0;
  for (int k = 0; k < spec_.num_layers(); ++k) {
    offsets_.push_back(total);
    total += Linear::num_parameters(width(k), width(k + 1));
  }
  params_.resize(total);
  grads_.resize(total);
  params_.zero(stream);
  grads_.zero(stream);
  outs_.resize(static_cast<size_t>(spec_.num_layers()));
  // The zeros must be in place before a copy on another stream touches the buffers.
  CUDA_CHECK(cudaStreamSynchronize(stream));
}

void CudaTrainMlp::upload(std::span<const float> params, cudaStream_t stream) {
  RECUR_CHECK_ARG(params.size() == num_parameters(),
                  "CudaTrainMlp::upload: {} floats, the MLP has {} parameters", params.size(),
                  num_parameters());
  params_.upload(params, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
}

void CudaTrainMlp::download(std::span<float> params, cudaStream_t stream) const {
  RECUR_CHECK_ARG(params.size() == num_parameters(),
                  "CudaTrainMlp::download: {} floats, the MLP has {} parameters", params.size(),
                  num_parameters());
  params_.download(params, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
}

void CudaTrainMlp::download_gradients(std::span<float> grads, cudaStream_t stream) const {
  RECUR_CHECK_ARG(grads.size() == num_parameters(),
                  "CudaTrainMlp::download_gradients: {} floats, the MLP has {} parameters",
                  grads.size(), num_parameters());
  grads_.download(grads, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
}

void CudaTrainMlp::zero_gradients(cudaStream_t stream) {
  grads_.zero(stream);
}

void CudaTrainMlp::grow(int n) {
  if (n <= capacity_) return;
  // cudaFree waits for the device's pending work, so nothing enqueued still uses an old buffer.
  // (Not capturable in a CUDA graph: capture only after the largest n has been seen.)
  for (int k = 0; k < spec_.num_layers(); ++k)
    outs_[static_cast<size_t>(k)].resize(rows_times(n, width(k + 1)));
  const int widest = *std::max_element(spec_.widths.begin(), spec_.widths.end());
  g_.resize(rows_times(n, widest));
  dinput_.resize(rows_times(n, widest));
  capacity_ = n;
}

const float* CudaTrainMlp::forward(cublasHandle_t cublas, int n, const float* x,
                                   cudaStream_t stream) {
  RECUR_CHECK_ARG(n >= 0, "CudaTrainMlp::forward: n {} rows", n);
  RECUR_CHECK_ARG(n == 0 || x != nullptr, "CudaTrainMlp::forward: x is null for {} rows", n);
  grow(n);
  x_ = x;
  last_n_ = n;
  if (n == 0) return outs_.back().data();
  constexpr float kOne = 1.0f, kZero = 0.0f;
  const float* in_ptr = x;
  for (int k = 0; k < spec_.num_layers(); ++k) {
    const int in = width(k), out = width(k + 1);
    float* out_ptr = outs_[static_cast<size_t>(k)].data();               // (n, out)
    const float* w = params_.data() + offsets_[static_cast<size_t>(k)];  // (out, in) row-major
    const float* bias = w + rows_times(out, in);                         // (out)
    // y (n, out) = x (n, in) W^T, row-major. Column-major views: y^T (out, n), x^T (in, n), and
    // W row-major (out, in) is W^T (in, out) column-major, so y^T = op_T(W^T) x^T.
    CUBLAS_CHECK(cublasSgemm(cublas, CUBLAS_OP_T, CUBLAS_OP_N, out, n, in, &kOne, w, in, in_ptr, in,
                             &kZero, out_ptr, out));
    kernels::launch_bias_activation(
        out_ptr, bias, n, out,
        activated(k) ? device_activation(spec_.activation) : kernels::Activation::kIdentity,
        stream);
    in_ptr = out_ptr;
  }
  return outs_.back().data();
}

void CudaTrainMlp::backward(cublasHandle_t cublas, const float* dy, float* dx,
                            cudaStream_t stream) {
  RECUR_CHECK_ARG(last_n_ >= 0, "CudaTrainMlp::backward called before any forward");
  const int n = last_n_;
  if (n == 0) return;
  RECUR_CHECK_ARG(dy != nullptr, "CudaTrainMlp::backward: dy is null for {} rows", n);
  constexpr float kOne = 1.0f, kZero = 0.0f;
  // upstream: the gradient w.r.t. layer k's activated output: dy at the top, then dinput_.
  const float* upstream = dy;
  for (int k = spec_.num_layers() - 1; k >= 0; --k) {
    const int in = width(k), out = width(k + 1);
    const float* y = outs_[static_cast<size_t>(k)].data();                    // (n, out)
    const float* x = k == 0 ? x_ : outs_[static_cast<size_t>(k) - 1].data();  // (n, in)
    const size_t w_off = offsets_[static_cast<size_t>(k)];
    const float* w = params_.data() + w_off;  // (out, in) row-major
    float* dw = grads_.data() + w_off;        // (out, in) row-major
    float* db = dw + rows_times(out, in);     // (out)

    // g (n, out): the gradient w.r.t. the pre-activation. Without an activation it is upstream
    // itself (only the top layer can be so, and then upstream is the caller's dy, read only).
    const float* g = upstream;
    if (activated(k)) {
      kernels::launch_activation_backward(upstream, y, n, out, device_activation(spec_.activation),
                                          g_.data(), stream);
      g = g_.data();
    }
    // dW (out, in) += g^T (out, n) x (n, in). Column-major: dW^T (in, out) = x^T (in, n) g (n,
    // out), x^T being x row-major with ld in, g being g^T (out, n) column-major, op_T.
    CUBLAS_CHECK(cublasSgemm(cublas, CUBLAS_OP_N, CUBLAS_OP_T, in, out, n, &kOne, x, in, g, out,
                             &kOne, dw, in));
    kernels::launch_bias_grad(g, n, out, db, stream);
    // dinput (n, in) = g (n, out) W (out, in). Column-major: dinput^T (in, n) = W^T (in, out)
    // g^T (out, n), W^T being W row-major with ld in. Layer 0's goes to the caller's dx.
    float* dinput = k == 0 ? dx : dinput_.data();
    if (dinput != nullptr)
      CUBLAS_CHECK(cublasSgemm(cublas, CUBLAS_OP_N, CUBLAS_OP_N, in, n, out, &kOne, w, in, g, out,
                               &kZero, dinput, in));
    upstream = dinput;
  }
}

}  // namespace recur::policy
