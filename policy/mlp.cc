#include "policy/mlp.h"

#include <algorithm>
#include <cmath>

#include <fmt/ranges.h>

#include "core/error.h"
#include "policy/eigen.h"
#include "policy/gemm.h"
#include "policy/initializers.h"

namespace recur::policy {
namespace {

using ArrayMap = Eigen::Map<Eigen::ArrayXf>;
using ConstArrayMap = Eigen::Map<const Eigen::ArrayXf>;

size_t rows_times(int n, int width) {
  return static_cast<size_t>(n) * static_cast<size_t>(width);
}

// y = act(y), in place.
void activate(Activation activation, std::span<float> y) {
  ArrayMap a(y.data(), static_cast<Eigen::Index>(y.size()));
  if (activation == Activation::kTanh)
    a = a.tanh();
  else
    a = a.max(0.0f);
}

// dz = g * act'(z), written from the activation's output y = act(z): tanh' = 1 - y^2; relu' is
// 1 where y > 0 (0 at the kink, as PyTorch). dz may be g itself.
void activation_backward(Activation activation, std::span<const float> y, std::span<const float> g,
                         std::span<float> dz) {
  const auto size = static_cast<Eigen::Index>(y.size());
  const ConstArrayMap ya(y.data(), size), ga(g.data(), size);
  ArrayMap da(dz.data(), size);
  if (activation == Activation::kTanh)
    da = ga * (1.0f - ya.square());
  else
    da = (ya > 0.0f).select(ga, 0.0f);
}

}  // namespace

std::string_view to_string(Activation activation) {
  return activation == Activation::kTanh ? "tanh" : "relu";
}

Activation parse_activation(std::string_view name) {
  if (name == "tanh") return Activation::kTanh;
  if (name == "relu") return Activation::kRelu;
  throw Error(fmt::format("unknown activation '{}'; allowed: tanh, relu", name));
}

std::string_view to_string(InitScheme scheme) {
  return scheme == InitScheme::kOrthogonal ? "orthogonal" : "pytorch";
}

InitScheme parse_init_scheme(std::string_view name) {
  if (name == "orthogonal") return InitScheme::kOrthogonal;
  if (name == "pytorch") return InitScheme::kPyTorch;
  throw Error(fmt::format("unknown initializer '{}'; allowed: orthogonal, pytorch", name));
}

// ----------------------------------------------------------------------------------------------
// Linear

Linear::Linear(int in, int out, std::span<float> weight, std::span<float> bias,
               std::span<float> weight_grad, std::span<float> bias_grad)
    : in_(in),
      out_(out),
      weight_(weight),
      bias_(bias),
      weight_grad_(weight_grad),
      bias_grad_(bias_grad) {
  RECUR_CHECK_ARG(in > 0 && out > 0, "Linear: in {} and out {} must be positive", in, out);
  const size_t w = rows_times(out, in), b = static_cast<size_t>(out);
  RECUR_CHECK_ARG(
      weight.size() == w && weight_grad.size() == w && bias.size() == b && bias_grad.size() == b,
      "Linear({}, {}): weight {} / grad {} floats (want {}), bias {} / grad {} (want {})", in, out,
      weight.size(), weight_grad.size(), w, bias.size(), bias_grad.size(), b);
}

void Linear::forward(int n, std::span<const float> x, std::span<float> y) const {
  RECUR_CHECK_ARG(n >= 0 && x.size() == rows_times(n, in_) && y.size() == rows_times(n, out_),
                  "Linear({}, {}).forward: n {} with x of {} and y of {} floats", in_, out_, n,
                  x.size(), y.size());
  // y starts as the bias in every row, then accumulates x W^T.
  for (int i = 0; i < n; ++i)
    std::copy(bias_.begin(), bias_.end(), y.begin() + static_cast<ptrdiff_t>(rows_times(i, out_)));
  gemm(n, out_, in_, x, Transpose::kNo, weight_, Transpose::kYes, y, /*accumulate=*/true);
}

void Linear::backward(int n, std::span<const float> x, std::span<const float> dy,
                      std::span<float> dx) const {
  RECUR_CHECK_ARG(n >= 0 && x.size() == rows_times(n, in_) && dy.size() == rows_times(n, out_) &&
                      (dx.empty() || dx.size() == rows_times(n, in_)),
                  "Linear({}, {}).backward: n {} with x of {}, dy of {}, dx of {} floats", in_,
                  out_, n, x.size(), dy.size(), dx.size());
  // dW (out, in) += dy^T (out, n) x (n, in)
  gemm(out_, in_, n, dy, Transpose::kYes, x, Transpose::kNo, weight_grad_, /*accumulate=*/true);
  Eigen::Map<Eigen::VectorXf> db(bias_grad_.data(), out_);
  for (int i = 0; i < n; ++i)
    db += Eigen::Map<const Eigen::VectorXf>(dy.data() + rows_times(i, out_), out_);
  // dx (n, in) = dy (n, out) W (out, in)
  if (!dx.empty())
    gemm(n, in_, out_, dy, Transpose::kNo, weight_, Transpose::kNo, dx, /*accumulate=*/false);
}

void Linear::init(InitScheme scheme, float gain, Rng& rng) const {
  if (scheme == InitScheme::kOrthogonal) {
    orthogonal_init(out_, in_, gain, rng, weight_);
    std::fill(bias_.begin(), bias_.end(), 0.0f);
    return;
  }
  const double bound = 1.0 / std::sqrt(static_cast<double>(in_));
  uniform_init(bound, rng, weight_);
  uniform_init(bound, rng, bias_);
  for (auto* v : {&weight_, &bias_})
    for (auto& x : *v) x *= gain;
}

// ----------------------------------------------------------------------------------------------
// Mlp

void MlpSpec::validate() const {
  RECUR_CHECK(widths.size() >= 2, "an MLP needs at least two widths (input and output), got [{}]",
              fmt::join(widths, ", "));
  for (const int w : widths)
    RECUR_CHECK(w > 0, "MLP widths must be positive, got [{}]", fmt::join(widths, ", "));
  RECUR_CHECK(std::isfinite(gain) && std::isfinite(output_gain),
              "MLP gains must be finite, got gain {} and output_gain {}", gain, output_gain);
}

Mlp::Mlp(MlpSpec spec) : spec_(std::move(spec)) {
  spec_.validate();
  size_t total = 0;
  for (int k = 0; k < num_layers(); ++k) {
    offsets_.push_back(total);
    total += Linear::num_parameters(spec_.widths[static_cast<size_t>(k)],
                                    spec_.widths[static_cast<size_t>(k) + 1]);
  }
  params_.assign(total, 0.0f);
  grads_.assign(total, 0.0f);
  outs_.resize(static_cast<size_t>(num_layers()));
}

Mlp::Mlp(MlpSpec spec, Rng& rng) : Mlp(std::move(spec)) {
  init(rng);
}

Linear Mlp::layer(int k) {
  RECUR_CHECK_ARG(k >= 0 && k < num_layers(), "Mlp::layer({}) of {} layers", k, num_layers());
  const int in = spec_.widths[static_cast<size_t>(k)];
  const int out = spec_.widths[static_cast<size_t>(k) + 1];
  const size_t w = weight_offset(k), b = w + rows_times(out, in);
  const auto o = static_cast<size_t>(out);
  const std::span<float> p(params_), g(grads_);
  return Linear(in, out, p.subspan(w, b - w), p.subspan(b, o), g.subspan(w, b - w),
                g.subspan(b, o));
}

void Mlp::init(Rng& rng) {
  for (int k = 0; k < num_layers(); ++k) {
    const bool last = k + 1 == num_layers();
    // nn.Linear's default has no gain; only the output layer is rescaled under kPyTorch.
    const float hidden_gain = spec_.init == InitScheme::kOrthogonal ? spec_.gain : 1.0f;
    layer(k).init(spec_.init, last ? spec_.output_gain : hidden_gain, rng);
  }
}

void Mlp::reserve(int max_batch) {
  RECUR_CHECK_ARG(max_batch >= 0, "Mlp::reserve({})", max_batch);
  if (max_batch <= max_batch_) return;
  max_batch_ = max_batch;
  input_.resize(rows_times(max_batch, input()));
  for (int k = 0; k < num_layers(); ++k)
    outs_[static_cast<size_t>(k)].resize(
        rows_times(max_batch, spec_.widths[static_cast<size_t>(k) + 1]));
  const int widest = *std::max_element(spec_.widths.begin(), spec_.widths.end());
  grad_a_.resize(rows_times(max_batch, widest));
  grad_b_.resize(rows_times(max_batch, widest));
}

void Mlp::forward(int n, std::span<const float> x, std::span<float> y) {
  RECUR_CHECK_ARG(
      n >= 0 && x.size() == rows_times(n, input()) && y.size() == rows_times(n, output()),
      "Mlp.forward: n {} with x of {} floats (want n x {}) and y of {} (want n x {})", n, x.size(),
      input(), y.size(), output());
  reserve(n);
  std::copy(x.begin(), x.end(), input_.begin());
  std::span<const float> in(input_.data(), x.size());
  for (int k = 0; k < num_layers(); ++k) {
    auto& out_buffer = outs_[static_cast<size_t>(k)];
    const std::span<float> out(out_buffer.data(),
                               rows_times(n, spec_.widths[static_cast<size_t>(k) + 1]));
    layer(k).forward(n, in, out);
    if (activated(k)) activate(spec_.activation, out);
    in = out;
  }
  std::copy(in.begin(), in.end(), y.begin());
  last_n_ = n;
}

void Mlp::backward(std::span<const float> dy, std::span<float> dx) {
  RECUR_CHECK_ARG(last_n_ >= 0, "Mlp.backward called before any forward");
  const int n = last_n_;
  RECUR_CHECK_ARG(
      dy.size() == rows_times(n, output()) && (dx.empty() || dx.size() == rows_times(n, input())),
      "Mlp.backward: last forward had n {}; dy of {} floats (want n x {}), dx of {} "
      "(want empty or n x {})",
      n, dy.size(), output(), dx.size(), input());
  // g: the gradient w.r.t. layer k's activated output. It lives in dy (the caller's) or in one of
  // the two ping-pong buffers (g_buffer); dz replaces it in place, and layer k's input gradient
  // goes to the other buffer.
  std::span<const float> g = dy;
  float* g_buffer = nullptr;
  for (int k = num_layers() - 1; k >= 0; --k) {
    const int in_width = spec_.widths[static_cast<size_t>(k)];
    std::span<const float> dz = g;
    if (activated(k)) {
      float* dst = g_buffer != nullptr ? g_buffer : grad_a_.data();
      const std::span<float> out(dst, g.size());
      activation_backward(spec_.activation,
                          std::span<const float>(outs_[static_cast<size_t>(k)].data(), g.size()), g,
                          out);
      dz = out;
      g_buffer = dst;
    }
    const std::span<const float> in =
        k == 0 ? std::span<const float>(input_.data(), rows_times(n, in_width))
               : std::span<const float>(outs_[static_cast<size_t>(k) - 1].data(),
                                        rows_times(n, in_width));
    std::span<float> din = dx;
    if (k > 0) {
      float* other = g_buffer == grad_a_.data() ? grad_b_.data() : grad_a_.data();
      din = std::span<float>(other, rows_times(n, in_width));
    }
    layer(k).backward(n, in, dz, din);
    g = din;
    g_buffer = din.data();
  }
}

void Mlp::zero_gradients() {
  std::fill(grads_.begin(), grads_.end(), 0.0f);
}

std::string Mlp::weight_name(const std::string& prefix, int k) const {
  if (num_layers() == 1 && !spec_.activate_output) return prefix + "weight";
  return prefix + std::to_string(2 * k) + ".weight";
}

std::string Mlp::bias_name(const std::string& prefix, int k) const {
  if (num_layers() == 1 && !spec_.activate_output) return prefix + "bias";
  return prefix + std::to_string(2 * k) + ".bias";
}

TensorMap Mlp::export_buffer(const AlignedVector<float>& buffer, const std::string& prefix) const {
  TensorMap out;
  for (int k = 0; k < num_layers(); ++k) {
    const int in = spec_.widths[static_cast<size_t>(k)];
    const int out_width = spec_.widths[static_cast<size_t>(k) + 1];
    const auto w = buffer.begin() + static_cast<ptrdiff_t>(weight_offset(k));
    const auto b = w + static_cast<ptrdiff_t>(rows_times(out_width, in));
    out[weight_name(prefix, k)] = Tensor({out_width, in}, std::vector<float>(w, b));
    out[bias_name(prefix, k)] = Tensor({out_width}, std::vector<float>(b, b + out_width));
  }
  return out;
}

TensorMap Mlp::to_tensors(const std::string& prefix) const {
  return export_buffer(params_, prefix);
}

TensorMap Mlp::gradient_tensors(const std::string& prefix) const {
  return export_buffer(grads_, prefix);
}

void Mlp::load_tensors(const TensorMap& tensors, const std::string& prefix) {
  const TensorMap want = to_tensors(prefix);
  // Validate everything before changing anything.
  for (const auto& [name, expected] : want) {
    const auto it = tensors.find(name);
    RECUR_CHECK(it != tensors.end(), "tensor '{}' is missing (an MLP with widths [{}] needs it)",
                name, fmt::join(spec_.widths, ", "));
    RECUR_CHECK(
        it->second.shape == expected.shape && it->second.data.size() == expected.data.size(),
        "tensor '{}' has shape [{}], expected [{}] for an MLP with widths [{}]", name,
        fmt::join(it->second.shape, ", "), fmt::join(expected.shape, ", "),
        fmt::join(spec_.widths, ", "));
  }
  for (int k = 0; k < num_layers(); ++k) {
    const Linear l = layer(k);
    const auto& w = tensors.at(weight_name(prefix, k)).data;
    const auto& b = tensors.at(bias_name(prefix, k)).data;
    std::copy(w.begin(), w.end(), l.weight().begin());
    std::copy(b.begin(), b.end(), l.bias().begin());
  }
}

}  // namespace recur::policy
