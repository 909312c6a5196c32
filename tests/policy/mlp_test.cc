#include "policy/mlp.h"

#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "core/error.h"
#include "tests/support/alloc_counter.h"
#include "tests/support/skip.h"

using recur::Rng;
using recur::policy::Activation;
using recur::policy::InitScheme;
using recur::policy::Linear;
using recur::policy::Mlp;
using recur::policy::MlpSpec;
using recur::policy::TensorMap;

namespace {

// The MLP's math in float64, straight from the definition, over the same flat parameter layout
// (per layer: weight (out, in) row-major, then bias (out)).
std::vector<double> reference_forward(const MlpSpec& spec, const std::vector<double>& params, int n,
                                      std::vector<double> x) {
  size_t offset = 0;
  for (int k = 0; k < spec.num_layers(); ++k) {
    const int in = spec.widths[static_cast<size_t>(k)];
    const int out = spec.widths[static_cast<size_t>(k) + 1];
    const double* w = params.data() + offset;
    const double* b = w + static_cast<size_t>(out * in);
    offset += static_cast<size_t>(out * in + out);
    std::vector<double> y(static_cast<size_t>(n * out));
    const bool act = k + 1 < spec.num_layers() || spec.activate_output;
    for (int i = 0; i < n; ++i)
      for (int o = 0; o < out; ++o) {
        double z = b[o];
        for (int j = 0; j < in; ++j) z += w[o * in + j] * x[static_cast<size_t>(i * in + j)];
        if (act) z = spec.activation == Activation::kTanh ? std::tanh(z) : std::max(z, 0.0);
        y[static_cast<size_t>(i * out + o)] = z;
      }
    x = std::move(y);
  }
  return x;
}

// sum(r * y): a random linear functional of the output, whose gradient w.r.t. y is r.
double reference_loss(const MlpSpec& spec, const std::vector<double>& params, int n,
                      const std::vector<double>& x, const std::vector<float>& r) {
  const auto y = reference_forward(spec, params, n, x);
  double loss = 0;
  for (size_t k = 0; k < y.size(); ++k) loss += static_cast<double>(r[k]) * y[k];
  return loss;
}

std::vector<float> random_floats(size_t size, Rng& rng, double scale = 1.0) {
  std::vector<float> v(size);
  for (auto& x : v) x = static_cast<float>(scale * rng.uniform(-1.0, 1.0));
  return v;
}

std::vector<double> to_double(std::span<const float> v) {
  return {v.begin(), v.end()};
}

std::vector<MlpSpec> test_specs() {
  MlpSpec encoder{.widths = {5, 7, 6}};
  MlpSpec relu{.widths = {4, 9, 8, 3}, .activation = Activation::kRelu, .activate_output = false};
  MlpSpec tanh_head{.widths = {6, 8, 2}, .activate_output = false};
  MlpSpec head{.widths = {7, 3}, .activate_output = false, .output_gain = 0.5f};
  return {encoder, relu, tanh_head, head};
}

}  // namespace

TEST_CASE("Mlp forward matches a float64 reference") {
  Rng rng(1);
  for (const auto& spec : test_specs()) {
    CAPTURE(spec.widths.size());
    Mlp mlp(spec, rng);
    const int n = 6;
    const auto x = random_floats(static_cast<size_t>(n * mlp.input()), rng, 2.0);
    std::vector<float> y(static_cast<size_t>(n * mlp.output()));
    mlp.forward(n, x, y);
    const auto ref = reference_forward(spec, to_double(mlp.parameters()), n, to_double(x));
    // float32 dot products of <= 9 terms of size O(1) and a float32 tanh: errors ~1e-6.
    for (size_t k = 0; k < y.size(); ++k) CHECK(y[k] == doctest::Approx(ref[k]).epsilon(1e-5));
  }
}

TEST_CASE("Mlp backward matches float64 central differences") {
  Rng rng(2);
  for (const auto& spec : test_specs()) {
    CAPTURE(spec.widths.size());
    CAPTURE(spec.activate_output);
    Mlp mlp(MlpSpec(spec), rng);
    // Non-zero biases, so the bias paths are exercised (orthogonal init zeroes them).
    for (int k = 0; k < mlp.num_layers(); ++k)
      for (auto& b : mlp.layer(k).bias()) b = static_cast<float>(rng.uniform(-0.5, 0.5));
    const int n = 5;
    const auto x = random_floats(static_cast<size_t>(n * mlp.input()), rng, 1.5);
    const auto r = random_floats(static_cast<size_t>(n * mlp.output()), rng);
    std::vector<float> y(r.size()), dx(x.size());
    mlp.zero_gradients();
    mlp.forward(n, x, y);
    mlp.backward(r, dx);

    // Central differences of the float64 reference at the float32 parameters: with h = 1e-6 the
    // truncation error is ~h^2 = 1e-12 and the rounding error ~1e-16 / h = 1e-10, so the
    // difference to the analytic gradient is the float32 rounding of forward and backward
    // (~1e-6 for these O(1) values and <= 9-term sums). Tolerance 1e-5 abs + 1e-5 rel: about ten
    // times that, and far below any real mistake (a missing term is O(0.1)).
    const double h = 1e-6;
    auto params = to_double(mlp.parameters());
    const auto xd = to_double(x);
    for (size_t p = 0; p < params.size(); ++p) {
      const double saved = params[p];
      params[p] = saved + h;
      const double up = reference_loss(spec, params, n, xd, r);
      params[p] = saved - h;
      const double down = reference_loss(spec, params, n, xd, r);
      params[p] = saved;
      const double fd = (up - down) / (2 * h);
      CAPTURE(p);
      CHECK(std::abs(mlp.gradients()[p] - fd) <= 1e-5 + 1e-5 * std::abs(fd));
    }
    auto xp = xd;
    for (size_t k = 0; k < xp.size(); ++k) {
      const double saved = xp[k];
      xp[k] = saved + h;
      const double up = reference_loss(spec, params, n, xp, r);
      xp[k] = saved - h;
      const double down = reference_loss(spec, params, n, xp, r);
      xp[k] = saved;
      const double fd = (up - down) / (2 * h);
      CAPTURE(k);
      CHECK(std::abs(dx[k] - fd) <= 1e-5 + 1e-5 * std::abs(fd));
    }
  }
}

TEST_CASE("Mlp backward accumulates gradients and may skip the input gradient") {
  Rng rng(3);
  Mlp mlp(MlpSpec{.widths = {3, 5, 2}}, rng);
  const int n = 4;
  const auto x = random_floats(12, rng);
  const auto r = random_floats(8, rng);
  std::vector<float> y(8), dx(12);
  mlp.forward(n, x, y);
  mlp.backward(r, dx);
  const std::vector<float> once(mlp.gradients().begin(), mlp.gradients().end());
  mlp.backward(r);  // no dx: parameter gradients only
  // Not bit-exact: the bias sums add the rows onto the earlier total in a different order.
  for (size_t k = 0; k < once.size(); ++k)
    CHECK(mlp.gradients()[k] == doctest::Approx(2 * once[k]).epsilon(1e-6));
  mlp.zero_gradients();
  for (const float g : mlp.gradients()) CHECK(g == 0.0f);
}

TEST_CASE("Mlp forward and backward run across GEMM tiles") {
  // Widths and a batch above the GEMM tiles (depth 128, panels 256), against the reference.
  Rng rng(4);
  const MlpSpec spec{.widths = {130, 140, 3}, .activate_output = false};
  Mlp mlp(spec, rng);
  const int n = 300;
  const auto x = random_floats(static_cast<size_t>(n * 130), rng);
  std::vector<float> y(static_cast<size_t>(n * 3));
  mlp.forward(n, x, y);
  const auto ref = reference_forward(spec, to_double(mlp.parameters()), n, to_double(x));
  // 130- and 140-term float32 dot products: errors ~1e-5 on values O(1).
  for (size_t k = 0; k < y.size(); ++k) CHECK(y[k] == doctest::Approx(ref[k]).epsilon(1e-4));
  // The bias gradient is the column sum of dz and the last layer has none: exact to float32
  // summation over 300 rows.
  std::vector<float> dy(y.size(), 1.0f), dx(x.size());
  mlp.zero_gradients();
  mlp.backward(dy, dx);
  for (const float g : mlp.layer(1).bias_grad()) CHECK(g == doctest::Approx(300.0));
}

TEST_CASE("Mlp tensors carry PyTorch names and shapes") {
  Mlp encoder(MlpSpec{.widths = {4, 8, 6}});
  const TensorMap t = encoder.to_tensors("encoder.");
  REQUIRE(t.size() == 4);
  CHECK(t.at("encoder.0.weight").shape == std::vector<int64_t>{8, 4});
  CHECK(t.at("encoder.0.bias").shape == std::vector<int64_t>{8});
  CHECK(t.at("encoder.2.weight").shape == std::vector<int64_t>{6, 8});
  CHECK(t.at("encoder.2.bias").shape == std::vector<int64_t>{6});

  Mlp head(MlpSpec{.widths = {6, 3}, .activate_output = false});
  const TensorMap h = head.to_tensors("actor.");
  CHECK(h.size() == 2);
  CHECK(h.at("actor.weight").shape == std::vector<int64_t>{3, 6});
  CHECK(h.at("actor.bias").shape == std::vector<int64_t>{3});

  Mlp two_heads(MlpSpec{.widths = {6, 5, 1}, .activate_output = false});
  CHECK(two_heads.to_tensors("critic.").count("critic.2.weight") == 1);
  CHECK(two_heads.gradient_tensors("critic.").count("critic.2.bias") == 1);
}

TEST_CASE("Mlp tensors and the flat buffer round trip bit-exactly") {
  Rng rng(5);
  const MlpSpec spec{.widths = {4, 8, 6}, .activation = Activation::kRelu};
  Mlp a(spec, rng);
  const TensorMap t = a.to_tensors("encoder.");
  // The flat buffer is the tensors' data in layer order: weight, then bias.
  std::vector<float> concatenated;
  for (const char* name :
       {"encoder.0.weight", "encoder.0.bias", "encoder.2.weight", "encoder.2.bias"}) {
    const auto& d = t.at(name).data;
    concatenated.insert(concatenated.end(), d.begin(), d.end());
  }
  CHECK(concatenated == std::vector<float>(a.parameters().begin(), a.parameters().end()));

  Mlp b(spec);
  b.load_tensors(t, "encoder.");
  CHECK(b.to_tensors("encoder.") == t);
  CHECK(std::vector<float>(b.parameters().begin(), b.parameters().end()) == concatenated);

  TensorMap missing = t;
  missing.erase("encoder.2.bias");
  Mlp c(spec);
  CHECK_THROWS_AS(c.load_tensors(missing, "encoder."), recur::Error);
  TensorMap wrong = t;
  wrong.at("encoder.0.weight").shape = {4, 8};
  CHECK_THROWS_AS(c.load_tensors(wrong, "encoder."), recur::Error);
  for (const float p : c.parameters()) CHECK(p == 0.0f);  // nothing was half-loaded
}

TEST_CASE("Mlp orthogonal init has orthonormal rows or columns times the gain") {
  Rng rng(6);
  const MlpSpec spec{.widths = {5, 8, 3}, .activate_output = false, .output_gain = 0.01f};
  Mlp mlp(spec, rng);
  const auto check = [](const Linear& l, double gain) {
    // W (out, in): W W^T = gain^2 I when out <= in, else W^T W = gain^2 I.
    const int out = l.out(), in = l.in();
    const bool rows = out <= in;
    const int m = rows ? out : in, len = rows ? in : out;
    for (int a = 0; a < m; ++a)
      for (int b = 0; b < m; ++b) {
        double dot = 0;
        for (int k = 0; k < len; ++k) {
          const auto ia = static_cast<size_t>(rows ? a * in + k : k * in + a);
          const auto ib = static_cast<size_t>(rows ? b * in + k : k * in + b);
          dot += static_cast<double>(l.weight()[ia]) * static_cast<double>(l.weight()[ib]);
        }
        // float32 rounding of unit-norm entries: ~1e-7 relative.
        CHECK(dot == doctest::Approx(a == b ? gain * gain : 0.0).epsilon(1e-5).scale(gain * gain));
      }
    for (const float b : l.bias()) CHECK(b == 0.0f);
  };
  check(mlp.layer(0), std::sqrt(2.0));  // (8, 5): orthonormal columns
  check(mlp.layer(1), 0.01);            // (3, 8): orthonormal rows

  // Same seed, same network.
  Rng again(6);
  Mlp twin(spec, again);
  CHECK(std::vector<float>(twin.parameters().begin(), twin.parameters().end()) ==
        std::vector<float>(mlp.parameters().begin(), mlp.parameters().end()));
}

TEST_CASE("Mlp PyTorch default init stays within its bounds and scales the output layer") {
  Rng rng(7);
  Mlp mlp(MlpSpec{.widths = {16, 9, 4},
                  .activate_output = false,
                  .init = InitScheme::kPyTorch,
                  .output_gain = 0.5f},
          rng);
  const auto within = [](std::span<const float> v, double bound) {
    double largest = 0;
    for (const float x : v) largest = std::max(largest, std::abs(static_cast<double>(x)));
    CHECK(largest <= bound);
    CHECK(largest > 0.5 * bound);  // actually spread over the range
  };
  within(mlp.layer(0).weight(), 1.0 / 4.0);  // 1/sqrt(16)
  within(mlp.layer(0).bias(), 1.0 / 4.0);
  within(mlp.layer(1).weight(), 0.5 / 3.0);  // gain * 1/sqrt(9)
}

TEST_CASE("Mlp rejects bad specs and bad buffers") {
  CHECK_THROWS_AS(Mlp(MlpSpec{.widths = {4}}), recur::Error);
  CHECK_THROWS_AS(Mlp(MlpSpec{.widths = {4, 0, 2}}), recur::Error);
  CHECK_THROWS_AS(recur::policy::parse_activation("sigmoid"), recur::Error);
  CHECK(recur::policy::parse_activation("relu") == Activation::kRelu);
  Mlp mlp(MlpSpec{.widths = {3, 2}});
  std::vector<float> y(4), dy(4);
  CHECK_THROWS_AS(mlp.backward(dy), std::invalid_argument);  // no forward yet
  CHECK_THROWS_AS(mlp.forward(2, std::vector<float>(5), y), std::invalid_argument);
  mlp.forward(2, std::vector<float>(6), y);
  CHECK_THROWS_AS(mlp.backward(std::vector<float>(3)), std::invalid_argument);
  std::vector<float> dx(5);
  CHECK_THROWS_AS(mlp.backward(dy, dx), std::invalid_argument);
}

TEST_CASE("Mlp forward and backward do not allocate after reserve") {
  if (!recur::test::AllocationCounter::available()) {
    recur::test::skip("allocation counting is off in sanitizer builds");
    return;
  }
  Rng rng(8);
  for (const auto& spec : test_specs()) {
    Mlp mlp(spec, rng);
    mlp.reserve(200);
    const auto x = random_floats(static_cast<size_t>(200 * mlp.input()), rng);
    std::vector<float> y(static_cast<size_t>(200 * mlp.output())), dx(x.size());
    size_t allocations = 0;
    {
      recur::test::AllocationCounter counter;
      for (const int n : {200, 17, 1, 0}) {
        const auto rows = static_cast<size_t>(n);
        mlp.forward(n, std::span(x).first(rows * static_cast<size_t>(mlp.input())),
                    std::span(y).first(rows * static_cast<size_t>(mlp.output())));
        mlp.backward(std::span(y).first(rows * static_cast<size_t>(mlp.output())),
                     std::span(dx).first(rows * static_cast<size_t>(mlp.input())));
        mlp.backward(std::span(y).first(rows * static_cast<size_t>(mlp.output())));
      }
      allocations = counter.count();
    }
    CHECK(allocations == 0);
  }
}
