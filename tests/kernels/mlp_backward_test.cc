// The learner MLP's backward kernels (kernels/mlp_backward.h) against double-precision references:
// activation_backward against dy * act'(y) (tanh 1 - y^2, relu y > 0, identity), in place too;
// bias_grad against the column sums, ADDED to what db held, with several column blocks and a
// partial one, and bitwise repeatable. Skipped (with a message) without a usable GPU.
//
// Tolerances: activation_backward is three float32 ops per value; tanh's 1 - y^2 rounds y^2 to
// ~6e-8 absolute, which is a large RELATIVE error where |y| -> 1 (1 - y^2 -> 0), so the check is
// absolute in units of |dy| (act' <= 1): 1e-6 |dy|, a few times the worst case. bias_grad sums up
// to 1000 float32 values in its own order (32 strided partial sums of <= 32 terms, then a 5-step
// tree): the error is at most ~40 ulp of the sum of |g|, checked as 1e-5 of that scale.
#include <doctest/doctest.h>

#ifdef RECUR_WITH_CUDA

#include <cmath>
#include <vector>

#include "core/rng.h"
#include "kernels/cuda_memory.h"
#include "kernels/mlp_backward.h"
#include "tests/support/device_copy.h"
#include "tests/support/gpu_skip.h"
#include "tests/support/uniform.h"

namespace {

using recur::kernels::Activation;
using recur::kernels::DeviceBuffer;

using recur::test::to_device;
using recur::test::to_host;
using recur::test::uniform;

}  // namespace

TEST_CASE("activation_backward kernel equals its formula") {
  if (!recur::test::gpu_or_skip("activation_backward kernel equals its formula")) return;
  const int rows = 37, n = 19;
  recur::Rng rng(11);
  const std::vector<float> dy = uniform(rows * n, -2, 2, rng);
  std::vector<float> y = uniform(rows * n, -1, 1, rng);  // tanh's range; relu sees <= 0 too
  y[3] = 0.0f;                                           // relu's kink: gradient 0
  for (Activation act : {Activation::kIdentity, Activation::kTanh, Activation::kRelu})
    for (bool in_place : {false, true}) {
      CAPTURE(static_cast<int>(act));
      CAPTURE(in_place);
      auto d_dy = to_device(dy);
      auto d_y = to_device(y);
      DeviceBuffer<float> d_g(dy.size());
      float* g = in_place ? d_dy.data() : d_g.data();
      recur::kernels::launch_activation_backward(d_dy.data(), d_y.data(), rows, n, act, g, nullptr);
      const std::vector<float> out = to_host(in_place ? d_dy : d_g);
      CHECK(to_host(d_y) == y);
      for (size_t i = 0; i < dy.size(); ++i) {
        const double yi = y[i];
        const double want = act == Activation::kTanh   ? dy[i] * (1.0 - yi * yi)
                            : act == Activation::kRelu ? (yi > 0 ? double{dy[i]} : 0.0)
                                                       : dy[i];
        CHECK(std::abs(out[i] - want) <= 1e-6 * std::abs(dy[i]));
      }
    }
}

TEST_CASE("bias_grad kernel adds the column sums deterministically") {
  if (!recur::test::gpu_or_skip("bias_grad kernel adds the column sums deterministically")) return;
  recur::Rng rng(12);
  // {1, 1}: one value; {1000, 70}: three column blocks, the last partial; {5, 1}: fewer rows than
  // lanes; {64, 32}: exactly one block.
  struct Shape {
    int rows, n;
  };
  for (const Shape shape : {Shape{1, 1}, Shape{1000, 70}, Shape{5, 1}, Shape{64, 32}}) {
    const int rows = shape.rows, n = shape.n;
    CAPTURE(rows);
    CAPTURE(n);
    const std::vector<float> g = uniform(static_cast<size_t>(rows) * n, -1, 1, rng);
    const std::vector<float> db0 = uniform(static_cast<size_t>(n), -3, 3, rng);
    auto d_g = to_device(g);
    std::vector<std::vector<float>> runs;
    for (int run = 0; run < 2; ++run) {
      auto d_db = to_device(db0);
      recur::kernels::launch_bias_grad(d_g.data(), rows, n, d_db.data(), nullptr);
      runs.push_back(to_host(d_db));
    }
    CHECK(runs[0] == runs[1]);
    for (int j = 0; j < n; ++j) {
      double sum = db0[static_cast<size_t>(j)], scale = std::abs(sum);
      for (int r = 0; r < rows; ++r) {
        sum += g[static_cast<size_t>(r) * n + j];
        scale += std::abs(g[static_cast<size_t>(r) * n + j]);
      }
      CHECK(std::abs(runs[0][static_cast<size_t>(j)] - sum) <= 1e-5 * scale);
    }
  }
}

#endif  // RECUR_WITH_CUDA
