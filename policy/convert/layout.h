// Shared pieces of the layout converters (policy/convert/*): moving gate blocks between
// canonical rows and foreign columns, name templates, and shape checks with useful errors.
// Internal to the converters; the public API is in tf_lstm_block.h and keras.h.
//
// A canonical matrix is (G*H, in) row-major: gate block g is rows [g*H, (g+1)*H). TF and Keras
// store the transpose, (in, S*H): slot s is columns [s*H, (s+1)*H). `slot_gate[s]` names the
// canonical gate held by foreign slot s; the order differs per framework (TF ICFO, Keras GRU
// z,r,h), and getting it wrong is invisible at t = 0 with zero state.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "policy/canonical_weights.h"
#include "policy/tensor.h"

namespace recur::policy::convert {

// Fills rows [row0, row0 + in) of dst (any rows, S*H) from src (G*H, in) canonical:
//   dst[row0 + r][s*H + j] = src[slot_gate[s]*H + j][r]
// Every canonical gate appears in slot_gate once (S = G).
void rows_to_columns(const std::vector<float>& src, int in, int hidden,
                     std::span<const int> slot_gate, std::vector<float>& dst, int row0);
// The inverse: fills dst (G*H, in) from rows [row0, row0 + in) of src (any rows, S*H).
void columns_to_rows(const std::vector<float>& src, int in, int hidden,
                     std::span<const int> slot_gate, std::vector<float>& dst, int row0);
// Bias blocks: dst[s*H + j] = src[slot_gate[s]*H + j], and its inverse.
std::vector<float> gates_to_slots(const std::vector<float>& src, int hidden,
                                  std::span<const int> slot_gate);
std::vector<float> slots_to_gates(const std::vector<float>& src, int hidden,
                                  std::span<const int> slot_gate);

// Throws std::invalid_argument unless every layer of `weights` is sized for its spec.
void check_sizes(const CanonicalWeights& weights);

// Splits a bias sum into the two canonical biases, bias_ih = sum/2 and bias_hh = sum - sum/2, so
// that bias_ih + bias_hh == sum exactly in float (only the sum is identifiable from one bias).
void split_bias_sum(const std::vector<float>& sum, std::vector<float>& bias_ih,
                    std::vector<float>& bias_hh);
// The elementwise float sum bias_ih + bias_hh, as cuDNN forms it.
std::vector<float> bias_sum(const std::vector<float>& bias_ih, const std::vector<float>& bias_hh);

// Expands a name template for layer k: "{k}" -> k; "{layer}" -> layer_base for k = 0 and
// layer_base_k after (Keras' auto-naming); "{cell}" -> cell_name. Throws recur::Error when a
// template without {k} or {layer} is used for more than one layer (the names would collide).
std::string expand_names(const std::string& name_template, int k, int layers,
                         const std::string& layer_base = "", const std::string& cell_name = "");

// Whether a template names each layer apart (has {k} or {layer}); one that does not names one
// layer only.
bool names_per_layer(const std::string& name_template);

// The input width of a TF cell's kernel `name`, checked to be (input + hidden, 4 hidden) with
// input >= 1; recur::Error names the tensor, its shape, the cell (`cell`, e.g. "TF LSTMBlockCell")
// and where hidden came from (`hidden_from`, e.g. "its bias").
int tf_kernel_input(const TensorMap& tensors, const std::string& name, int hidden,
                    const std::string& cell, const std::string& hidden_from);

// Layers of a TF MultiRNNCell file: how many consecutive k have `{template}kernel` (1 for a
// template that names one layer only).
int count_tf_layers(const TensorMap& tensors, const std::string& name_template);

// The tensor `name` of `tensors`, checked to have shape `expected`; throws recur::Error naming
// the tensor, its shape, the expected shape and `what` (which layout and layer wanted it).
const Tensor& require_tensor(const TensorMap& tensors, const std::string& name,
                             const std::vector<int64_t>& expected, const std::string& what);
// The tensor `name` of `tensors` with any shape; throws recur::Error naming it and `what`.
const Tensor& require_tensor(const TensorMap& tensors, const std::string& name,
                             const std::string& what);

// "[a, b]" for messages.
std::string shape_string(const std::vector<int64_t>& shape);

}  // namespace recur::policy::convert
