// The recurrent core's shape and its math. The math is cuDNN's (DOUBLE_BIAS, no peepholes, no
// forget-bias constant), written once here; every executor implements exactly these equations.
//
// Per layer k (input x = the env features for k = 0, else layer k-1's h), gates in cuDNN order:
//
//   LSTM (G = 4: i, f, g, o)
//     i = sigmoid(W_i x + b_Wi + R_i h + b_Ri)      f = sigmoid(W_f x + b_Wf + R_f h + b_Rf)
//     g = tanh   (W_g x + b_Wg + R_g h + b_Rg)      o = sigmoid(W_o x + b_Wo + R_o h + b_Ro)
//     c' = f * clip(c) + i * g          (the stored cell state is raw: never clipped when written)
//     h' = o * tanh(clip(c'))
//   where clip(v) = clamp(v, -cell_clip, cell_clip) when cell_clip > 0, else v. This is cuDNN's
//   CUDNN_RNN_CLIP_MINMAX as probed on an H100 (docs/PERFORMANCE.md, "the first H100 run"; the
//   probed numbers are pinned in tests/policy/cell_clip_test.cc): the state is clipped on every
//   READ, so an out-of-range c_0 (cx) is clipped on its first use and the final state cy = c_T is
//   returned raw. TF's LSTMBlockCell
//   stores clip(c') instead; its h sequence is the same whenever c_0 lies inside the clip, but
//   its stored state is clip(c) where ours is c (policy/convert/tf_lstm_block.h).
//   GRU (G = 3: r, z, n), the "reset after" form
//     r = sigmoid(W_r x + b_Wr + R_r h + b_Rr)      z = sigmoid(W_z x + b_Wz + R_z h + b_Rz)
//     n = tanh(W_n x + b_Wn + r * (R_n h + b_Rn))
//     h' = (1 - z) * n + z * h
//   RNN_TANH / RNN_RELU (G = 1)
//     h' = act(W x + b_W + R h + b_R)
//   MINGRU (G = 2: z, h~; Feng et al. 2024, "Were RNNs All We Needed?"; not a cuDNN cell)
//     z = sigmoid(W_z x + b_z)                       h~ = W_h x + b_h   (linear: no g(), no tanh)
//     h' = (1 - z) * h + z * h~
//   No recurrent weights R and no b_R: the gates do not read h, so a whole sequence is one input
//   GEMM plus a linear scan. h~ is the paper's plain (non-log-space) candidate: the scan here runs
//   in linear space, where h' is a convex combination of h and h~ (no overflow to guard against),
//   and g(x) = x + 0.5 | sigmoid(x) exists only to keep h positive for a log-space scan.
//   LSTM_LN (G = 4: i, f, g, o; TF's LayerNormBasicLSTMCell after Ba et al. 2016; not a cuDNN
//   cell). No gate biases: each gate block's pre-activation is layer-normalized on its own, and
//   its LayerNorm shift plays the bias's part (TF drops the bias when layer norm is on):
//     LN_q(v) = gamma_q * (v - mean(v)) / sqrt(var(v) + eps) + beta_q   (over the H units of one
//               row; var is the biased variance, as TF's moments and ONNX's LayerNormalization)
//     i = sigmoid(LN_i(W_i x + R_i h))     f = sigmoid(LN_f(W_f x + R_f h))
//     g = tanh   (LN_g(W_g x + R_g h))     o = sigmoid(LN_o(W_o x + R_o h))
//     c' = LN_c(f * c + i * g)             (the NORMALIZED cell state is the state carried on)
//     h' = o * tanh(c')
//   TF adds a constant forget_bias to f after LN_f; here it is folded into beta_f (the same
//   function: beta is added after the normalization), so the canonical cell has no constant and
//   the converter moves it (policy/convert/tf_layer_norm_lstm.h). eps is CoreSpec::norm_epsilon
//   (1e-5 as PyTorch's and ONNX's LayerNorm; TF's contrib layer_norm uses 1e-12, which an
//   imported TF cell keeps).
//   Stacks are residual, with the plain identity skip: layer k's OUTPUT, the input of layer k+1
//   and for the top layer the core's output, is
//     out_0 = h_0,   out_k = h_k + out_{k-1} (k >= 1; both have H units)
//   while its STATE stays h_k (what the state buffer holds and an episode start zeroes).
//   MINGRU_HIGHWAY (G = 3: z, h~, p): minGRU's cell with the gated highway PufferLib 4.0 stacks
//   it with (src/models.cu): a third block, read from the layer's input as the others, gates
//   between this layer's h and the output below it
//     z, h~ and h' as MINGRU                         s = sigmoid(W_p x + b_p)
//     out_k = s * h_k + (1 - s) * out_{k-1}   with out_{-1} = 0, so out_0 = s * h_0
//   (layer 0's input is the env features, of another width than H, so there its highway gates h_0
//   against zero: an output gate that reads no state). s reads x alone, so a whole sequence is
//   still one input GEMM, the linear scan and one elementwise pass; the STATE stays h_k.
//   Measured (docs/PERFORMANCE.md, "minGRU"): with identity skips minGRU needs 4 layers of 128 to
//   learn RepeatPreviousEasy; with the highway 2 layers do.
//
// State per layer: h (H) for all cells, plus c (H) for LSTM. Layout of a state buffer for B
// slots: (layers, B, H) for h and (layers, B, H) for c, as cuDNN's hx/cx.
#pragma once

#include <string>
#include <string_view>

namespace recur::policy {

enum class CellType { kLstm, kGru, kRnnTanh, kRnnRelu, kMinGru, kLstmLn, kMinGruHighway };

// "lstm", "gru", "rnn_tanh", "rnn_relu", "mingru", "lstm_ln", "mingru_highway"
std::string_view to_string(CellType cell);
// Throws recur::Error listing the allowed names.
CellType parse_cell_type(std::string_view name);

constexpr int num_gates(CellType cell) {
  return cell == CellType::kLstm || cell == CellType::kLstmLn         ? 4
         : cell == CellType::kGru || cell == CellType::kMinGruHighway ? 3
         : cell == CellType::kMinGru                                  ? 2
                                                                      : 1;
}
// Both minGRU cells: gates that read x alone, and the scan h' = h + z (h~ - h).
constexpr bool is_mingru(CellType cell) {
  return cell == CellType::kMinGru || cell == CellType::kMinGruHighway;
}
// False for minGRU: its canonical weights have no weight_hh / bias_hh (empty vectors).
constexpr bool has_recurrent_weights(CellType cell) {
  return !is_mingru(cell);
}
// True where layer k >= 1 adds its input to its h (core_spec.h's residual minGRU stack).
constexpr bool has_residual_stack(CellType cell) {
  return cell == CellType::kMinGru;
}
// True where every layer's output is the gated highway s h_k + (1 - s) out_{k-1} (core_spec.h's
// MINGRU_HIGHWAY; the gate s is the third block).
constexpr bool has_highway_stack(CellType cell) {
  return cell == CellType::kMinGruHighway;
}
// True where layer k's output (the next layer's input, or the core's) is not its h alone: a
// residual layer k >= 1 or any highway layer. Executors keep such a layer's output apart.
constexpr bool has_layer_output(CellType cell, int k) {
  return (k > 0 && has_residual_stack(cell)) || has_highway_stack(cell);
}
constexpr bool has_cell_state(CellType cell) {
  return cell == CellType::kLstm || cell == CellType::kLstmLn;
}
// False for the layer-norm LSTM: no bias_ih / bias_hh (LayerNorm's shift is the gate bias).
constexpr bool has_gate_biases(CellType cell) {
  return cell != CellType::kLstmLn;
}
// True for the layer-norm LSTM: per layer a LayerNorm gain and shift for each of the 4 gate
// blocks and the cell state (canonical_weights.h: norm_weight, norm_bias, (5, H)).
constexpr bool has_layer_norm(CellType cell) {
  return cell == CellType::kLstmLn;
}
// LayerNorm groups per layer: gate blocks i, f, g, o, then the cell state.
constexpr int kNormGroups = 5;

struct CoreSpec {
  CellType cell = CellType::kLstm;
  int input = 1;    // features into layer 0
  int hidden = 64;  // H, the same for every layer
  int layers = 1;
  float cell_clip = 0;         // LSTM only; <= 0 means no clipping
  float norm_epsilon = 1e-5f;  // lstm_ln only: LayerNorm's eps (TF-imported cells: 1e-12)

  int gates() const { return num_gates(cell); }
  int layer_input(int k) const { return k == 0 ? input : hidden; }
  // Rows of weight_hh and length of bias_hh per layer: G*H, or 0 for minGRU.
  int recurrent_rows() const { return has_recurrent_weights(cell) ? gates() * hidden : 0; }
  // Length of bias_ih (and of bias_hh where there are recurrent weights): G*H, or 0 (lstm_ln).
  int bias_rows() const { return has_gate_biases(cell) ? gates() * hidden : 0; }
  int recurrent_bias_rows() const { return has_gate_biases(cell) ? recurrent_rows() : 0; }
  // Length of norm_weight and norm_bias per layer: 5H, or 0 without layer norm.
  int norm_size() const { return has_layer_norm(cell) ? kNormGroups * hidden : 0; }
  // Floats of recurrent state per slot, all layers: h (and c for LSTM).
  int state_size() const { return layers * hidden * (has_cell_state(cell) ? 2 : 1); }
  // Throws recur::Error naming the bad field.
  void validate() const;
  bool operator==(const CoreSpec&) const = default;
};

// Throws recur::Error when spec's cell has no CUDA step executor: called by the CUDA step
// executor's layout and the device choice of the actor, so no GPU path runs a cell it lacks.
// Every cell has one now (kernels/cell_gates.h); the check stays the one place to refuse a
// future cell.
void require_cuda_core(const CoreSpec& spec);
// The same for cuDNN's sequence executor and its weight space: refuses both minGRUs and lstm_ln,
// which cuDNN's fused RNN cannot run (the GPU learner runs them on recur's fused CUDA sequence
// executor instead: make_gpu_sequence_executor chooses).
void require_cudnn_core(const CoreSpec& spec);

}  // namespace recur::policy
