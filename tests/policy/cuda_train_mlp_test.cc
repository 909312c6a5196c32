// The learner's device MLP (policy/cuda/cuda_train_mlp.h) against the host Mlp (policy/mlp.h):
// for 1-3 layers, tanh and relu, with and without an output activation, and n = 1, 37, 300 rows:
// forward equals Mlp::forward; two backward calls ADD the same parameter gradients as the host's
// two (checked per layer, weight and bias apart) and write the same dx; dy is left unchanged;
// dx == nullptr gives the same gradients; the parameter round trip is bit exact; two runs are
// bitwise identical; a forward of fewer rows reuses the buffers. Every case skips itself (with a
// message) without a usable GPU.
//
// Tolerance 1e-5 relative (norm over each compared block): both sides compute the same float32
// expressions, but cuBLAS sums the GEMMs in another order than the host's GEMM (and adds the bias
// after the product, not before): ~1e-7 relative per GEMM, compounded over <= 3 layers forward and
// 2 GEMMs per layer backward. 1e-5 leaves room for that and catches any wiring error (O(1)).
// relu's derivative at 0 could differ if a pre-activation rounded to either side of 0; the data
// are fixed and continuous, so that has probability ~1e-6 per value and would show as a
// repeatable failure, not a flaky one.
#include <doctest/doctest.h>

#ifdef RECUR_WITH_CUDA

#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <stdexcept>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "kernels/cuda_memory.h"
#include "policy/cuda/cuda_train_mlp.h"
#include "policy/mlp.h"
#include "tests/support/gpu_skip.h"
#include "tests/support/rel_err.h"
#include "tests/support/uniform.h"

using namespace recur::policy;
using recur::kernels::DeviceBuffer;

namespace {

// A cuBLAS handle bound to one stream, FP32 without TF32 (as the learner sets it up).
class Cublas {
 public:
  explicit Cublas(cudaStream_t stream) {
    CUBLAS_CHECK(cublasCreate(&handle_));
    CUBLAS_CHECK(cublasSetStream(handle_, stream));
    CUBLAS_CHECK(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH));
  }
  ~Cublas() { cublasDestroy(handle_); }
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

struct Case {
  std::vector<int> widths;
  Activation activation;
  bool activate_output;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {{8, 16}, Activation::kTanh, false},  // a lone head
      {{8, 16}, Activation::kRelu, true},
      {{7, 33, 5}, Activation::kTanh, true},
      {{7, 33, 5}, Activation::kRelu, false},
      {{4, 64, 64}, Activation::kTanh, true},  // an encoder
      {{4, 64, 64, 3}, Activation::kRelu, false},
      {{5, 24, 9, 2}, Activation::kTanh, false},
  };
  return all;
}

MlpSpec make_spec(const Case& c) {
  MlpSpec spec;
  spec.widths = c.widths;
  spec.activation = c.activation;
  spec.activate_output = c.activate_output;
  spec.init = InitScheme::kPyTorch;  // non-zero biases, so that the bias path is exercised
  spec.output_gain = 1.0f;
  return spec;
}

DeviceBuffer<float> to_device(const std::vector<float>& host, cudaStream_t stream) {
  DeviceBuffer<float> d(host.size());
  d.upload(host, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return d;
}

std::vector<float> to_host(const float* device, size_t size, cudaStream_t stream) {
  std::vector<float> host(size);
  if (size > 0)
    CUDA_CHECK(
        cudaMemcpyAsync(host.data(), device, size * sizeof(float), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return host;
}

using recur::test::rel_err;
using recur::test::uniform;

// One problem: the host Mlp's parameters, x, and the two upstream gradients.
struct Problem {
  std::vector<float> params, x, dy1, dy2;
};

Problem make_problem(const MlpSpec& spec, int n, uint64_t seed) {
  recur::Rng rng(seed);
  const Mlp mlp(spec, rng);
  Problem p;
  p.params.assign(mlp.parameters().begin(), mlp.parameters().end());
  p.x = uniform(static_cast<size_t>(n) * spec.input(), -1.5, 1.5, rng);
  p.dy1 = uniform(static_cast<size_t>(n) * spec.output(), -1, 1, rng);
  p.dy2 = uniform(static_cast<size_t>(n) * spec.output(), -1, 1, rng);
  return p;
}

struct Result {
  std::vector<float> y, dx, grads;
};

// The host Mlp: forward, backward(dy1), backward(dy2); dx of the second.
Result host_run(const MlpSpec& spec, int n, const Problem& p) {
  Mlp mlp(spec);
  std::copy(p.params.begin(), p.params.end(), mlp.parameters().begin());
  Result r;
  r.y.resize(p.dy1.size());
  r.dx.resize(p.x.size());
  mlp.forward(n, p.x, r.y);
  mlp.backward(p.dy1, r.dx);
  mlp.backward(p.dy2, r.dx);
  r.grads.assign(mlp.gradients().begin(), mlp.gradients().end());
  return r;
}

// The device MLP, the same sequence; dx (when asked for) starts as NaN, so that a GEMM reading
// it (beta != 0) would show.
Result device_run(const MlpSpec& spec, int n, const Problem& p, bool with_dx) {
  const recur::kernels::CudaStream stream;
  const cudaStream_t s = stream.get();
  const Cublas cublas(s);
  CudaTrainMlp mlp(spec, s);
  REQUIRE(mlp.num_parameters() == p.params.size());
  mlp.upload(p.params, s);
  auto x = to_device(p.x, s);
  auto dy1 = to_device(p.dy1, s);
  auto dy2 = to_device(p.dy2, s);
  auto dx = to_device(std::vector<float>(p.x.size(), std::numeric_limits<float>::quiet_NaN()), s);
  Result r;
  const float* y = mlp.forward(cublas.get(), n, x.data(), s);
  r.y = to_host(y, p.dy1.size(), s);
  mlp.backward(cublas.get(), dy1.data(), with_dx ? dx.data() : nullptr, s);
  mlp.backward(cublas.get(), dy2.data(), with_dx ? dx.data() : nullptr, s);
  if (with_dx) r.dx = to_host(dx.data(), p.x.size(), s);
  r.grads.resize(p.params.size());
  mlp.download_gradients(r.grads, s);
  CHECK(to_host(dy1.data(), p.dy1.size(), s) == p.dy1);  // dy is read only
  CHECK(to_host(dy2.data(), p.dy2.size(), s) == p.dy2);
  CHECK(to_host(x.data(), p.x.size(), s) == p.x);
  return r;
}

// Per layer, weight and bias apart: a wrong bias gradient cannot hide behind a large weight one.
void check_gradients(const MlpSpec& spec, const std::vector<float>& got,
                     const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  size_t off = 0;
  for (int k = 0; k < spec.num_layers(); ++k) {
    const auto in = static_cast<size_t>(spec.widths[static_cast<size_t>(k)]);
    const auto out = static_cast<size_t>(spec.widths[static_cast<size_t>(k) + 1]);
    CAPTURE(k);
    const std::span<const float> g(got), w(want);
    CHECK(rel_err(g.subspan(off, out * in), w.subspan(off, out * in)) <= 1e-5);
    off += out * in;
    CHECK(rel_err(g.subspan(off, out), w.subspan(off, out)) <= 1e-5);
    off += out;
  }
  CHECK(off == got.size());
}

}  // namespace

TEST_CASE("cuda_train_mlp forward and backward equal the host mlp") {
  if (!recur::test::gpu_or_skip("cuda_train_mlp forward and backward equal the host mlp")) return;
  for (const Case& c : cases())
    for (int n : {1, 37, 300}) {
      const MlpSpec spec = make_spec(c);
      CAPTURE(spec.widths.size());
      CAPTURE(spec.widths[1]);
      CAPTURE(to_string(spec.activation));
      CAPTURE(spec.activate_output);
      CAPTURE(n);
      const Problem p = make_problem(spec, n, 100 + static_cast<uint64_t>(n));
      const Result want = host_run(spec, n, p);
      const Result got = device_run(spec, n, p, true);
      CHECK(rel_err(got.y, want.y) <= 1e-5);
      CHECK(rel_err(got.dx, want.dx) <= 1e-5);
      check_gradients(spec, got.grads, want.grads);

      // Two runs agree bitwise; without dx the parameter gradients are the same bits.
      const Result again = device_run(spec, n, p, true);
      CHECK(again.y == got.y);
      CHECK(again.dx == got.dx);
      CHECK(again.grads == got.grads);
      const Result no_dx = device_run(spec, n, p, false);
      CHECK(no_dx.y == got.y);
      CHECK(no_dx.grads == got.grads);
    }
}

TEST_CASE("cuda_train_mlp parameters round trip and gradients zero") {
  if (!recur::test::gpu_or_skip("cuda_train_mlp parameters round trip and gradients zero")) return;
  const MlpSpec spec = make_spec(cases()[4]);
  const Problem p = make_problem(spec, 37, 7);
  const recur::kernels::CudaStream stream;
  const cudaStream_t s = stream.get();
  const Cublas cublas(s);
  CudaTrainMlp mlp(spec, s);
  std::vector<float> host(mlp.num_parameters(), 1.0f);
  mlp.download(host, s);
  CHECK(host == std::vector<float>(host.size(), 0.0f));  // zeros until uploaded
  mlp.upload(p.params, s);
  mlp.download(host, s);
  CHECK(host == p.params);
  CHECK(to_host(mlp.params(), host.size(), s) == p.params);  // params() is that buffer

  auto x = to_device(p.x, s);
  auto dy = to_device(p.dy1, s);
  mlp.forward(cublas.get(), 37, x.data(), s);
  mlp.backward(cublas.get(), dy.data(), nullptr, s);
  mlp.download_gradients(host, s);
  CHECK(std::any_of(host.begin(), host.end(), [](float g) { return g != 0.0f; }));
  mlp.zero_gradients(s);
  mlp.download_gradients(host, s);
  CHECK(host == std::vector<float>(host.size(), 0.0f));
  mlp.download(host, s);
  CHECK(host == p.params);  // backward leaves the parameters alone

  std::vector<float> wrong(host.size() + 1);
  CHECK_THROWS_AS(mlp.upload(wrong, s), std::invalid_argument);
  CHECK_THROWS_AS(mlp.download(wrong, s), std::invalid_argument);
  CHECK_THROWS_AS(mlp.download_gradients(wrong, s), std::invalid_argument);
  CudaTrainMlp fresh(spec, s);
  CHECK_THROWS_AS(fresh.backward(cublas.get(), dy.data(), nullptr, s), std::invalid_argument);
}

TEST_CASE("cuda_train_mlp reuses its buffers for fewer rows") {
  if (!recur::test::gpu_or_skip("cuda_train_mlp reuses its buffers for fewer rows")) return;
  const MlpSpec spec = make_spec(cases()[5]);
  const Problem big = make_problem(spec, 300, 8), small = make_problem(spec, 37, 9);
  const recur::kernels::CudaStream stream;
  const cudaStream_t s = stream.get();
  const Cublas cublas(s);
  CudaTrainMlp mlp(spec, s);
  mlp.upload(small.params, s);
  auto x_big = to_device(big.x, s);
  auto x_small = to_device(small.x, s);
  auto dy_small = to_device(small.dy1, s);
  DeviceBuffer<float> dx(small.x.size());
  const float* y_big = mlp.forward(cublas.get(), 300, x_big.data(), s);
  const float* y_small = mlp.forward(cublas.get(), 37, x_small.data(), s);
  CHECK(y_small == y_big);  // the same storage: nothing reallocated
  mlp.backward(cublas.get(), dy_small.data(), dx.data(), s);
  CHECK(mlp.forward(cublas.get(), 300, x_big.data(), s) == y_big);

  // The grown MLP computed the small batch as a fresh one does (one backward here).
  Problem once = small;
  once.dy2.assign(once.dy2.size(), 0.0f);  // the fresh run's second backward adds nothing
  const Result fresh = device_run(spec, 37, once, true);
  std::vector<float> grads(mlp.num_parameters());
  mlp.download_gradients(grads, s);
  CHECK(grads == fresh.grads);
}

#endif  // RECUR_WITH_CUDA
