// Canonical LSTM weights <-> TensorFlow's LSTMBlockCell (tf.contrib.rnn.LSTMBlockCell,
// tf.raw_ops.LSTMBlockCell / BlockLSTM) in a MultiRNNCell, one layer per cell:
//
//   {names}kernel  (in_k + H, 4H)  acts on [x, h] (x rows first); column blocks in ICFO order:
//                                  i, c (= cuDNN's g), f, o
//   {names}bias    (4H)            one bias
//
// The TF cell runs gates = [x, h]·kernel + bias, then adds forget_bias (default 1.0) to f at
// every step; cuDNN has no such constant and two biases. So, per gate,
//   export: bias_tf = bias_ih + bias_hh            (minus forget_bias for f)
//   import: bias_ih = bias_hh = (bias_tf + forget_bias for f) / 2
// Only the sum is identifiable from one bias, so the import's even split is a choice; the sum
// round-trips exactly when forget_bias = 0, and otherwise to the float rounding TF's own
// runtime addition of forget_bias has (a file stores bias_tf in float32).
//
// Equivalence also needs use_peephole=False, activations tanh/sigmoid, and TF's cell_clip equal
// to CoreSpec::cell_clip (None / -1 when 0); weights carry neither, callers record them.
//
// Cell clipping and states. TF's block cell STORES clip(c); recur (cuDNN's MINMAX, core_spec.h)
// stores the raw c and clips it where it is read. With the same weights and clip, and a c_0
// inside [-clip, clip], the two give the same h at every step; their cell states differ
// wherever |c| > clip. A state moved between them therefore means:
//   TF -> recur: TF's c is already clipped, so recur reads the same value: exact.
//   recur -> TF: pass clip(c); TF loses nothing it would have read, since recur also reads
//                clip(c). Only the raw value (which recur returns as cy) is not representable.
// Weights convert the same either way; only saved recurrent states need the clamp.
// docs/RNN_LAYOUT.md ("Gate orders", "TF LSTMBlockCell") gives the sources.
#pragma once

#include <string>

#include "policy/canonical_weights.h"
#include "policy/tensor.h"

namespace recur::policy::convert {

struct TfLstmBlockOptions {
  // LSTMBlockCell's forget_bias: the constant TF adds to f at run time.
  float forget_bias = 1.0f;
  // Scope of layer k's variables, prepended to "kernel" and "bias"; "{k}" is the layer index.
  // TF's names for cells in a MultiRNNCell under tf.nn.dynamic_rnn; a single cell outside a
  // MultiRNNCell is "rnn/lstm_cell/".
  std::string names = "rnn/multi_rnn_cell/cell_{k}/lstm_cell/";
};

// Throws recur::Error unless `weights` is an LSTM core (the block cell is an LSTM).
TensorMap to_tf_lstm_block(const CanonicalWeights& weights, const TfLstmBlockOptions& options = {});

// The core's shape from the tensors: layers = how many consecutive k have a kernel, H from the
// bias, input from layer 0's kernel rows. cell_clip is 0 (weights do not carry it).
CoreSpec infer_tf_lstm_block_spec(const TensorMap& tensors, const TfLstmBlockOptions& options = {});

// Throws recur::Error for a non-LSTM spec, a missing tensor or one with the wrong shape (naming
// the tensor, its shape and the expected one). Tensors not named by the template are ignored.
CanonicalWeights from_tf_lstm_block(const TensorMap& tensors, const CoreSpec& spec,
                                    const TfLstmBlockOptions& options = {});

}  // namespace recur::policy::convert
