// Canonical lstm_ln weights <-> TensorFlow 1.x's tf.contrib.rnn.LayerNormBasicLSTMCell with
// layer_norm=True, in a MultiRNNCell, one layer per cell. Per layer k, under the scope {names}:
//
//   kernel                      (in_k + H, 4H)  acts on [x, h] (x rows first); column blocks in
//                                               the order i, j, f, o, where TF's j (the tanh
//                                               candidate) is the canonical g
//   input/gamma, input/beta          (H)        LayerNorm of the i block
//   transform/gamma, transform/beta  (H)        ... of the j (= g) block
//   forget/gamma, forget/beta        (H)        ... of the f block
//   output/gamma, output/beta        (H)        ... of the o block
//   state/gamma, state/beta          (H)        ... of the new cell state
//
// The canonical rows are in gate order i, f, g, o (norm rows i, f, g, o, c), so the kernel
// columns and the norm scopes are permuted the same way LSTMBlockCell's are (TF's slot order is
// the same ICFO); a swapped f/j is invisible at t = 0 from a zero state, which is why the tests
// run several steps from a non-zero one.
//
// The TF cell has no gate bias when layer_norm is on (the LayerNorm shift is the bias), and adds
// the constant forget_bias (default 1.0) to f after its LayerNorm, inside the sigmoid. beta is
// also added after the normalization, so the constant folds into the shift exactly as a function:
//   import: beta_f = forget/beta + forget_bias       export: forget/beta = beta_f - forget_bias
// The round trip is bit exact for forget_bias = 0; otherwise it rounds beta_f to the float ulp
// of the sum, as TF's own float32 addition at run time does.
//
// TF's layer_norm (tf.contrib.layers.layer_norm) uses the biased variance and eps = 1e-12, not
// the 1e-5 of PyTorch / ONNX that recur defaults to; the inferred spec therefore carries
// norm_epsilon = 1e-12 so that an imported cell computes what TF computed. An exported core keeps
// its weights but runs under TF's 1e-12 there (the two differ only where a gate block's variance
// is near eps; `recur convert export` warns when the core's eps is not 1e-12).
//
// Not represented: recurrent dropout (dropout_keep_prob < 1 drops g during training; at
// inference keep_prob is 1, as TF's evaluation graphs set it, and the cell is deterministic), a
// non-tanh `activation`, and norm_gain / norm_shift (initializers only: the trained values are
// the gamma / beta variables). layer_norm=False builds a different variable set (kernel plus one
// "bias", no gammas or betas): a plain LSTM that an LSTMBlockCell with the same forget_bias
// computes, so its file is refused here with a pointer to tf_lstm_block.h.
#pragma once

#include <string>

#include "policy/canonical_weights.h"
#include "policy/tensor.h"

namespace recur::policy::convert {

struct TfLayerNormLstmOptions {
  // LayerNormBasicLSTMCell's forget_bias: the constant TF adds to LN_f(.) at run time.
  float forget_bias = 1.0f;
  // Scope of layer k's variables, prepended to "kernel", "input/gamma", ...; "{k}" is the layer
  // index. TF's names for cells in a MultiRNNCell under tf.nn.dynamic_rnn; a single cell outside
  // a MultiRNNCell is "rnn/layer_norm_basic_lstm_cell/".
  std::string names = "rnn/multi_rnn_cell/cell_{k}/layer_norm_basic_lstm_cell/";
};

// Throws recur::Error unless `weights` is an lstm_ln core, naming the core's cell and the layout
// that holds it instead.
TensorMap to_tf_layer_norm_lstm(const CanonicalWeights& weights,
                                const TfLayerNormLstmOptions& options = {});

// The core's shape from the tensors: cell lstm_ln, H from layer 0's input/gamma, input from its
// kernel rows minus H, layers = how many consecutive k have a kernel, norm_epsilon = 1e-12 (TF's
// layer_norm eps). Throws recur::Error for a layer_norm=False file (one with a "bias").
CoreSpec infer_tf_layer_norm_lstm_spec(const TensorMap& tensors,
                                       const TfLayerNormLstmOptions& options = {});

// Throws recur::Error for a non-lstm_ln spec, a layer_norm=False file, a missing tensor or one
// with the wrong shape (naming the tensor, its shape and the expected one). Tensors not named by
// the template are ignored. The result's spec is `spec` (its norm_epsilon included).
CanonicalWeights from_tf_layer_norm_lstm(const TensorMap& tensors, const CoreSpec& spec,
                                         const TfLayerNormLstmOptions& options = {});

}  // namespace recur::policy::convert
