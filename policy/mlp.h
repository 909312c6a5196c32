// The feed-forward parts of the policy: Linear (PyTorch's nn.Linear) and Mlp (nn.Sequential of
// Linear and activation layers), each with a hand-written backward.
//
// Buffers are float32, row-major, a batch of n rows: x (n, in), y (n, out). Parameters are
// nn.Linear's: weight (out, in) row-major, bias (out). An Mlp keeps all its parameters in one flat
// buffer and their gradients in another of the same layout (layer by layer: weight, then bias),
// so an elementwise optimizer (Adam) runs over them without knowing the layout; the same values
// are exported as canonical tensors with PyTorch's names.
//
// Gradients are ACCUMULATED (as PyTorch's .grad): backward adds, zero_gradients() clears. Input
// gradients (dx) are written, not added.
#pragma once

#include <cstddef>
#include <numbers>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/rng.h"
#include "policy/aligned.h"
#include "policy/tensor.h"

namespace recur::policy {

enum class Activation { kTanh, kRelu };

// "tanh", "relu"
std::string_view to_string(Activation activation);
// Throws recur::Error listing the allowed names.
Activation parse_activation(std::string_view name);

// kOrthogonal: orthogonal weights times a gain, zero biases (CleanRL's and SB3's PPO).
// kPyTorch: nn.Linear's default, weight and bias ~ U(-1/sqrt(in), 1/sqrt(in)).
enum class InitScheme { kOrthogonal, kPyTorch };

// "orthogonal", "pytorch"
std::string_view to_string(InitScheme scheme);
// Throws recur::Error listing the allowed names.
InitScheme parse_init_scheme(std::string_view name);

// One nn.Linear over storage that its owner provides: y = x W^T + b. Holds no activations, so
// backward is given the forward's input again.
class Linear {
 public:
  // weight and weight_grad (out, in); bias and bias_grad (out).
  Linear(int in, int out, std::span<float> weight, std::span<float> bias,
         std::span<float> weight_grad, std::span<float> bias_grad);

  static size_t num_parameters(int in, int out) {
    return static_cast<size_t>(out) * static_cast<size_t>(in) + static_cast<size_t>(out);
  }
  int in() const { return in_; }
  int out() const { return out_; }
  std::span<float> weight() const { return weight_; }
  std::span<float> bias() const { return bias_; }
  std::span<float> weight_grad() const { return weight_grad_; }
  std::span<float> bias_grad() const { return bias_grad_; }

  // x (n, in) -> y (n, out).
  void forward(int n, std::span<const float> x, std::span<float> y) const;
  // dy (n, out) and the forward's x (n, in): weight_grad += dy^T x, bias_grad += sum over rows of
  // dy; dx (n, in) = dy W unless dx is empty.
  void backward(int n, std::span<const float> x, std::span<const float> dy,
                std::span<float> dx) const;

  // Draws the weight, then the bias, from rng (see InitScheme); gain scales both.
  void init(InitScheme scheme, float gain, Rng& rng) const;

 private:
  int in_, out_;
  std::span<float> weight_, bias_, weight_grad_, bias_grad_;
};

struct MlpSpec {
  // {in, h_1, ..., out}: widths.size() - 1 Linear layers, layer k maps widths[k] -> widths[k+1].
  std::vector<int> widths;
  Activation activation = Activation::kTanh;
  // false: the last Linear has no activation (a head: logits, action mean, value).
  bool activate_output = true;
  InitScheme init = InitScheme::kOrthogonal;
  // Orthogonal gain of every layer but the last (CleanRL's layer_init default, sqrt(2)); kPyTorch
  // ignores it.
  float gain = std::numbers::sqrt2_v<float>;
  // The last layer's gain (commonly 0.01 for an actor head, 1 for a critic head). With kPyTorch
  // it scales the last layer's weight and bias; the other layers keep nn.Linear's default.
  float output_gain = std::numbers::sqrt2_v<float>;

  int input() const { return widths.front(); }
  int output() const { return widths.back(); }
  int num_layers() const { return static_cast<int>(widths.size()) - 1; }
  // Throws recur::Error naming the bad field.
  void validate() const;
  bool operator==(const MlpSpec&) const = default;
};

class Mlp {
 public:
  // Parameters zero; call init() or load_tensors().
  explicit Mlp(MlpSpec spec);
  Mlp(MlpSpec spec, Rng& rng);

  const MlpSpec& spec() const { return spec_; }
  int input() const { return spec_.input(); }
  int output() const { return spec_.output(); }
  int num_layers() const { return spec_.num_layers(); }

  // Draws every layer's parameters in order (see MlpSpec::init).
  void init(Rng& rng);
  // Sizes the workspace for batches of up to max_batch rows, so that forward and backward do
  // not allocate. A larger batch grows it (allocating once).
  void reserve(int max_batch);
  int reserved_batch() const { return max_batch_; }

  // x (n, input) -> y (n, output). Keeps a copy of x and every layer's output for backward.
  void forward(int n, std::span<const float> x, std::span<float> y);
  // Backward of the last forward: dy (n, output) -> dx (n, input) unless dx is empty; parameter
  // gradients are added to gradients().
  void backward(std::span<const float> dy, std::span<float> dx = {});
  void zero_gradients();

  // Flat buffers of the same layout: per layer, weight (out, in) then bias (out).
  std::span<float> parameters() { return params_; }
  std::span<const float> parameters() const { return params_; }
  std::span<float> gradients() { return grads_; }
  std::span<const float> gradients() const { return grads_; }
  size_t num_parameters() const { return params_.size(); }

  // A view of layer k over the flat buffers.
  Linear layer(int k);

  // PyTorch's state_dict names for nn.Sequential(Linear, act, Linear, act, ...): layer k is
  // "{prefix}{2k}.weight" / "{prefix}{2k}.bias" (prefix "encoder." gives encoder.0.weight,
  // encoder.2.weight, ...). The exception is a lone Linear without activation, which is named as
  // a bare nn.Linear: "{prefix}weight", "{prefix}bias" (a head, e.g. actor.weight).
  TensorMap to_tensors(const std::string& prefix) const;
  TensorMap gradient_tensors(const std::string& prefix) const;
  // Copies the parameters from tensors named as to_tensors names them; throws recur::Error naming
  // a missing tensor or a wrong shape (and changes nothing then). Other names are ignored.
  void load_tensors(const TensorMap& tensors, const std::string& prefix);

 private:
  size_t weight_offset(int k) const { return offsets_[static_cast<size_t>(k)]; }
  TensorMap export_buffer(const AlignedVector<float>& buffer, const std::string& prefix) const;
  std::string weight_name(const std::string& prefix, int k) const;
  std::string bias_name(const std::string& prefix, int k) const;
  bool activated(int k) const { return k + 1 < num_layers() || spec_.activate_output; }

  MlpSpec spec_;
  std::vector<size_t> offsets_;  // layer k's weight starts at params_[offsets_[k]]
  AlignedVector<float> params_, grads_;

  // Workspace, max_batch_ rows each.
  int max_batch_ = 0;
  int last_n_ = -1;             // rows of the last forward; -1: none yet
  AlignedVector<float> input_;  // (n, input)
  std::vector<AlignedVector<float>>
      outs_;                              // layer k's output after its activation (n, widths[k+1])
  AlignedVector<float> grad_a_, grad_b_;  // (n, max width): ping-pong for backward
};

}  // namespace recur::policy
