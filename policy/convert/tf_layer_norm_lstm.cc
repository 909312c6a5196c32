#include "policy/convert/tf_layer_norm_lstm.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "policy/convert/layout.h"

namespace recur::policy::convert {

namespace {

// Slot s of the TF kernel holds canonical gate kSlotGate[s]: TF's i, j, f, o over i, f, g, o.
constexpr std::array<int, 4> kSlotGate = {0, 2, 1, 3};
// The variable scope of canonical norm group q (norm rows i, f, g, o, c).
constexpr std::array<const char*, kNormGroups> kGroupScope = {"input/", "forget/", "transform/",
                                                              "output/", "state/"};
constexpr int kForgetGroup = 1;  // canonical index of f

// TF's contrib layer_norm eps (variance_epsilon in tf.contrib.layers.layer_norm).
constexpr float kTfLayerNormEpsilon = 1e-12f;

const char* layout_for(CellType cell) {
  switch (cell) {
    case CellType::kLstm:
      return "an lstm core is a TF LSTMBlockCell: use the tf-lstm-block layout";
    case CellType::kGru:
      return "use the keras layout for a gru";
    default:
      return "no TF or Keras layout holds it; export the whole policy as ONNX instead";
  }
}

void require_lstm_ln(const CoreSpec& spec) {
  RECUR_CHECK(spec.cell == CellType::kLstmLn,
              "the TensorFlow LayerNormBasicLSTMCell layout holds lstm_ln cores only, this core "
              "is {}; {}",
              to_string(spec.cell), layout_for(spec.cell));
}

// A layer_norm=False cell has a "bias" next to its kernel and no gammas or betas; it is a plain
// LSTM, which the block-cell converter already reads (same kernel layout, one bias).
void refuse_plain_lstm(const TensorMap& tensors, const std::string& scope,
                       const std::string& names) {
  RECUR_CHECK(!tensors.count(scope + "bias"),
              "tensor '{}' is present: this is a LayerNormBasicLSTMCell built with "
              "layer_norm=False (one gate bias, no layer norm), while recur's lstm_ln is the "
              "layer_norm=True cell. A layer_norm=False cell computes what an LSTMBlockCell with "
              "the same forget_bias does: import it with --from tf-lstm-block --names '{}' (an "
              "lstm core)",
              scope + "bias", names);
}

std::string layer_what(const CoreSpec& spec, int k) {
  return fmt::format("TF LayerNormBasicLSTMCell layer {} (input {}, hidden {})", k,
                     spec.layer_input(k), spec.hidden);
}

std::vector<float> group(const std::vector<float>& v, int q, int h) {
  const auto begin = v.begin() + static_cast<std::ptrdiff_t>(q) * h;
  return {begin, begin + h};
}

}  // namespace

TensorMap to_tf_layer_norm_lstm(const CanonicalWeights& weights,
                                const TfLayerNormLstmOptions& options) {
  const CoreSpec& spec = weights.spec;
  require_lstm_ln(spec);
  check_sizes(weights);
  const int h = spec.hidden;
  TensorMap out;
  for (int k = 0; k < spec.layers; ++k) {
    const LayerWeights& l = weights.layers[static_cast<size_t>(k)];
    const int in = spec.layer_input(k);
    Tensor kernel = Tensor::zeros({in + h, 4 * h});
    rows_to_columns(l.weight_ih, in, h, kSlotGate, kernel.data, 0);
    rows_to_columns(l.weight_hh, h, h, kSlotGate, kernel.data, in);
    const std::string scope = expand_names(options.names, k, spec.layers);
    out[scope + "kernel"] = std::move(kernel);
    for (int q = 0; q < kNormGroups; ++q) {
      std::vector<float> beta = group(l.norm_bias, q, h);
      if (q == kForgetGroup)
        for (float& b : beta) b -= options.forget_bias;  // TF adds it back at run time
      out[scope + kGroupScope[q] + "gamma"] = Tensor({h}, group(l.norm_weight, q, h));
      out[scope + kGroupScope[q] + "beta"] = Tensor({h}, std::move(beta));
    }
  }
  return out;
}

CoreSpec infer_tf_layer_norm_lstm_spec(const TensorMap& tensors,
                                       const TfLayerNormLstmOptions& options) {
  CoreSpec spec;
  spec.cell = CellType::kLstmLn;
  // The weights alone do not say which eps the cell ran with; a LayerNormBasicLSTMCell always
  // normalizes with TF's layer_norm, whose eps is fixed at 1e-12, and an imported cell must
  // compute what TF computed (recur's own default, 1e-5, would move every output slightly).
  spec.norm_epsilon = kTfLayerNormEpsilon;
  const std::string scope0 = expand_names(options.names, 0, 1);
  const std::string what = "TF LayerNormBasicLSTMCell layer 0";
  refuse_plain_lstm(tensors, scope0, options.names);
  const std::string gamma_name = scope0 + "input/gamma";
  const Tensor& gamma = require_tensor(tensors, gamma_name, what);
  RECUR_CHECK(gamma.shape.size() == 1 && gamma.shape[0] > 0,
              "tensor '{}' has shape {}, expected [hidden] for a TF LayerNormBasicLSTMCell gain",
              gamma_name, shape_string(gamma.shape));
  spec.hidden = static_cast<int>(gamma.shape[0]);
  spec.input = tf_kernel_input(tensors, scope0 + "kernel", spec.hidden, "TF LayerNormBasicLSTMCell",
                               "'" + gamma_name + "'");
  spec.layers = count_tf_layers(tensors, options.names);
  spec.validate();
  return spec;
}

CanonicalWeights from_tf_layer_norm_lstm(const TensorMap& tensors, const CoreSpec& spec,
                                         const TfLayerNormLstmOptions& options) {
  require_lstm_ln(spec);
  CanonicalWeights w = CanonicalWeights::zeros(spec);
  const int h = spec.hidden;
  for (int k = 0; k < spec.layers; ++k) {
    LayerWeights& l = w.layers[static_cast<size_t>(k)];
    const int in = spec.layer_input(k);
    const std::string scope = expand_names(options.names, k, spec.layers);
    const std::string what = layer_what(spec, k);
    refuse_plain_lstm(tensors, scope, options.names);
    const Tensor& kernel = require_tensor(tensors, scope + "kernel", {in + h, 4 * h}, what);
    columns_to_rows(kernel.data, in, h, kSlotGate, l.weight_ih, 0);
    columns_to_rows(kernel.data, h, h, kSlotGate, l.weight_hh, in);
    for (int q = 0; q < kNormGroups; ++q) {
      const std::string base = scope + kGroupScope[q];
      const Tensor& gamma = require_tensor(tensors, base + "gamma", {h}, what);
      const Tensor& beta = require_tensor(tensors, base + "beta", {h}, what);
      const auto at = static_cast<std::ptrdiff_t>(q) * h;
      std::copy(gamma.data.begin(), gamma.data.end(), l.norm_weight.begin() + at);
      std::copy(beta.data.begin(), beta.data.end(), l.norm_bias.begin() + at);
      if (q == kForgetGroup)
        for (int j = 0; j < h; ++j) l.norm_bias[static_cast<size_t>(at + j)] += options.forget_bias;
    }
  }
  return w;
}

}  // namespace recur::policy::convert
