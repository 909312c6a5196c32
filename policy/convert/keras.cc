#include "policy/convert/keras.h"

#include <array>
#include <span>

#include <fmt/format.h>

#include "core/error.h"
#include "policy/convert/layout.h"

namespace recur::policy::convert {

namespace {

// Slot s of a Keras kernel holds canonical gate SlotGate[s]: LSTM i,f,c,o is cuDNN's order;
// GRU z,r,h swaps cuDNN's r,z.
constexpr std::array<int, 4> kLstmSlotGate = {0, 1, 2, 3};
constexpr std::array<int, 3> kGruSlotGate = {1, 0, 2};

std::span<const int> slot_gate(CellType cell) {
  return cell == CellType::kLstm ? std::span<const int>(kLstmSlotGate)
                                 : std::span<const int>(kGruSlotGate);
}

void require_lstm_or_gru(CellType cell) {
  RECUR_CHECK(cell == CellType::kLstm || cell == CellType::kGru,
              "the keras layout holds LSTM and GRU cores only, this core is {}", to_string(cell));
}

// Layer k's variable prefix for `cell`.
std::string scope(const KerasOptions& options, CellType cell, int k, int layers) {
  const bool lstm = cell == CellType::kLstm;
  return expand_names(options.names, k, layers, lstm ? "lstm" : "gru",
                      lstm ? "lstm_cell" : "gru_cell");
}

}  // namespace

TensorMap to_keras(const CanonicalWeights& weights, const KerasOptions& options) {
  const CoreSpec& spec = weights.spec;
  require_lstm_or_gru(spec.cell);
  check_sizes(weights);
  const int h = spec.hidden;
  const int gh = spec.gates() * h;
  const auto slots = slot_gate(spec.cell);
  TensorMap out;
  for (int k = 0; k < spec.layers; ++k) {
    const LayerWeights& l = weights.layers[static_cast<size_t>(k)];
    const int in = spec.layer_input(k);
    Tensor kernel = Tensor::zeros({in, gh});
    Tensor recurrent = Tensor::zeros({h, gh});
    rows_to_columns(l.weight_ih, in, h, slots, kernel.data, 0);
    rows_to_columns(l.weight_hh, h, h, slots, recurrent.data, 0);
    Tensor bias;
    if (spec.cell == CellType::kLstm) {
      bias = Tensor({gh}, gates_to_slots(bias_sum(l.bias_ih, l.bias_hh), h, slots));
    } else {
      bias.shape = {2, gh};
      bias.data = gates_to_slots(l.bias_ih, h, slots);
      const auto recurrent_bias = gates_to_slots(l.bias_hh, h, slots);
      bias.data.insert(bias.data.end(), recurrent_bias.begin(), recurrent_bias.end());
    }
    const std::string s = scope(options, spec.cell, k, spec.layers);
    out[s + "kernel"] = std::move(kernel);
    out[s + "recurrent_kernel"] = std::move(recurrent);
    out[s + "bias"] = std::move(bias);
  }
  return out;
}

CoreSpec infer_keras_spec(const TensorMap& tensors, const KerasOptions& options) {
  const std::string lstm0 = scope(options, CellType::kLstm, 0, 1);
  const std::string gru0 = scope(options, CellType::kGru, 0, 1);
  const bool has_lstm = tensors.count(lstm0 + "recurrent_kernel") > 0;
  const bool has_gru = tensors.count(gru0 + "recurrent_kernel") > 0;
  RECUR_CHECK(has_lstm || has_gru,
              "no Keras LSTM or GRU layer found: neither '{}' nor '{}' is a tensor; set the name "
              "template (now '{}') to match the file's names",
              lstm0 + "recurrent_kernel", gru0 + "recurrent_kernel", options.names);
  RECUR_CHECK(!(has_lstm && has_gru && lstm0 != gru0),
              "both a Keras LSTM ('{}') and a GRU ('{}') are present; set the name template "
              "(now '{}') to name one of them",
              lstm0 + "recurrent_kernel", gru0 + "recurrent_kernel", options.names);
  const std::string s0 = has_lstm ? lstm0 : gru0;

  // recurrent_kernel (H, G*H) tells the cell apart, whatever the names say.
  const Tensor& recurrent = require_tensor(tensors, s0 + "recurrent_kernel", "Keras layer 0");
  const bool square_blocks = recurrent.shape.size() == 2 && recurrent.shape[0] > 0 &&
                             recurrent.shape[1] % recurrent.shape[0] == 0;
  const int64_t gates = square_blocks ? recurrent.shape[1] / recurrent.shape[0] : 0;
  RECUR_CHECK(gates == 3 || gates == 4,
              "tensor '{}' has shape {}, expected [hidden, 4*hidden] (LSTM) or [hidden, "
              "3*hidden] (GRU)",
              s0 + "recurrent_kernel", shape_string(recurrent.shape));
  CoreSpec spec;
  spec.cell = gates == 4 ? CellType::kLstm : CellType::kGru;
  spec.hidden = static_cast<int>(recurrent.shape[0]);
  const Tensor& bias = require_tensor(tensors, s0 + "bias", "Keras layer 0");
  RECUR_CHECK(!(spec.cell == CellType::kGru && bias.shape.size() == 1),
              "tensor '{}' has shape {}: a Keras GRU(reset_after=False), which computes "
              "r * (R h) instead of cuDNN's r * (R h + b) and cannot be converted; retrain with "
              "reset_after=True (the Keras 2 default)",
              s0 + "bias", shape_string(bias.shape));
  const Tensor& kernel = require_tensor(tensors, s0 + "kernel", "Keras layer 0");
  RECUR_CHECK(
      kernel.shape.size() == 2 && kernel.shape[0] > 0 && kernel.shape[1] == gates * spec.hidden,
      "tensor '{}' has shape {}, expected [input, {}] for a Keras {} with hidden {}", s0 + "kernel",
      shape_string(kernel.shape), gates * spec.hidden, to_string(spec.cell), spec.hidden);
  spec.input = static_cast<int>(kernel.shape[0]);
  spec.layers = 1;
  if (names_per_layer(options.names))
    while (tensors.count(scope(options, spec.cell, spec.layers, spec.layers + 1) + "kernel"))
      ++spec.layers;
  spec.validate();
  return spec;
}

CanonicalWeights from_keras(const TensorMap& tensors, const CoreSpec& spec,
                            const KerasOptions& options) {
  require_lstm_or_gru(spec.cell);
  CanonicalWeights w = CanonicalWeights::zeros(spec);
  const int h = spec.hidden;
  const int gh = spec.gates() * h;
  const auto slots = slot_gate(spec.cell);
  const bool lstm = spec.cell == CellType::kLstm;
  for (int k = 0; k < spec.layers; ++k) {
    LayerWeights& l = w.layers[static_cast<size_t>(k)];
    const int in = spec.layer_input(k);
    const std::string s = scope(options, spec.cell, k, spec.layers);
    const std::string what =
        fmt::format("Keras {} layer {} (input {}, hidden {}{})", to_string(spec.cell), k, in, h,
                    lstm ? "" : ", reset_after=True");
    const Tensor& kernel = require_tensor(tensors, s + "kernel", {in, gh}, what);
    const Tensor& recurrent = require_tensor(tensors, s + "recurrent_kernel", {h, gh}, what);
    const Tensor& bias = require_tensor(
        tensors, s + "bias", lstm ? std::vector<int64_t>{gh} : std::vector<int64_t>{2, gh}, what);
    columns_to_rows(kernel.data, in, h, slots, l.weight_ih, 0);
    columns_to_rows(recurrent.data, h, h, slots, l.weight_hh, 0);
    if (lstm) {
      split_bias_sum(slots_to_gates(bias.data, h, slots), l.bias_ih, l.bias_hh);
    } else {
      const auto mid = bias.data.begin() + gh;
      l.bias_ih = slots_to_gates({bias.data.begin(), mid}, h, slots);
      l.bias_hh = slots_to_gates({mid, bias.data.end()}, h, slots);
    }
  }
  return w;
}

}  // namespace recur::policy::convert
