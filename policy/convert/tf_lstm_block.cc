#include "policy/convert/tf_lstm_block.h"

#include <array>

#include <fmt/format.h>

#include "core/error.h"
#include "policy/convert/layout.h"

namespace recur::policy::convert {

namespace {

// Slot s of a TF block-cell kernel holds canonical gate kSlotGate[s]: ICFO over cuDNN's IFGO.
constexpr std::array<int, 4> kSlotGate = {0, 2, 1, 3};
constexpr int kForgetGate = 1;  // canonical (cuDNN) index of f

void require_lstm(const CoreSpec& spec) {
  RECUR_CHECK(spec.cell == CellType::kLstm,
              "the TensorFlow LSTMBlockCell layout holds LSTM cores only, this core is {}; "
              "use the keras layout for a GRU",
              to_string(spec.cell));
}

std::string layer_what(const CoreSpec& spec, int k) {
  return fmt::format("TF LSTMBlockCell layer {} (input {}, hidden {})", k, spec.layer_input(k),
                     spec.hidden);
}

}  // namespace

TensorMap to_tf_lstm_block(const CanonicalWeights& weights, const TfLstmBlockOptions& options) {
  const CoreSpec& spec = weights.spec;
  require_lstm(spec);
  check_sizes(weights);
  const int h = spec.hidden;
  TensorMap out;
  for (int k = 0; k < spec.layers; ++k) {
    const LayerWeights& l = weights.layers[static_cast<size_t>(k)];
    const int in = spec.layer_input(k);
    Tensor kernel = Tensor::zeros({in + h, 4 * h});
    rows_to_columns(l.weight_ih, in, h, kSlotGate, kernel.data, 0);
    rows_to_columns(l.weight_hh, h, h, kSlotGate, kernel.data, in);
    std::vector<float> sum = bias_sum(l.bias_ih, l.bias_hh);
    for (int j = 0; j < h; ++j)
      sum[static_cast<size_t>(kForgetGate * h + j)] -= options.forget_bias;
    const std::string scope = expand_names(options.names, k, spec.layers);
    out[scope + "kernel"] = std::move(kernel);
    out[scope + "bias"] = Tensor({4 * h}, gates_to_slots(sum, h, kSlotGate));
  }
  return out;
}

CoreSpec infer_tf_lstm_block_spec(const TensorMap& tensors, const TfLstmBlockOptions& options) {
  CoreSpec spec;
  spec.cell = CellType::kLstm;
  const std::string scope0 = expand_names(options.names, 0, 1);
  const Tensor& bias = require_tensor(tensors, scope0 + "bias", "TF LSTMBlockCell layer 0");
  RECUR_CHECK(bias.shape.size() == 1 && bias.shape[0] > 0 && bias.shape[0] % 4 == 0,
              "tensor '{}' has shape {}, expected [4*hidden] for a TF LSTMBlockCell bias",
              scope0 + "bias", shape_string(bias.shape));
  spec.hidden = static_cast<int>(bias.shape[0] / 4);
  spec.input =
      tf_kernel_input(tensors, scope0 + "kernel", spec.hidden, "TF LSTMBlockCell", "its bias");
  spec.layers = count_tf_layers(tensors, options.names);
  spec.validate();
  return spec;
}

CanonicalWeights from_tf_lstm_block(const TensorMap& tensors, const CoreSpec& spec,
                                    const TfLstmBlockOptions& options) {
  require_lstm(spec);
  CanonicalWeights w = CanonicalWeights::zeros(spec);
  const int h = spec.hidden;
  for (int k = 0; k < spec.layers; ++k) {
    LayerWeights& l = w.layers[static_cast<size_t>(k)];
    const int in = spec.layer_input(k);
    const std::string scope = expand_names(options.names, k, spec.layers);
    const std::string what = layer_what(spec, k);
    const Tensor& kernel = require_tensor(tensors, scope + "kernel", {in + h, 4 * h}, what);
    const Tensor& bias = require_tensor(tensors, scope + "bias", {4 * h}, what);
    columns_to_rows(kernel.data, in, h, kSlotGate, l.weight_ih, 0);
    columns_to_rows(kernel.data, h, h, kSlotGate, l.weight_hh, in);
    std::vector<float> sum = slots_to_gates(bias.data, h, kSlotGate);
    for (int j = 0; j < h; ++j)
      sum[static_cast<size_t>(kForgetGate * h + j)] += options.forget_bias;
    split_bias_sum(sum, l.bias_ih, l.bias_hh);
  }
  return w;
}

}  // namespace recur::policy::convert
