// Canonical LSTM / GRU weights <-> Keras (tf.keras 2.x) LSTM and GRU(reset_after=True) layers,
// one Keras layer per core layer:
//
//   {names}kernel            (in_k, G*H)  the transpose of weight_ih
//   {names}recurrent_kernel  (H, G*H)     the transpose of weight_hh
//   LSTM: {names}bias  (4H)     = bias_ih + bias_hh; column blocks i, f, c, o (cuDNN's order)
//   GRU:  {names}bias  (2, 3H)  row 0 = bias_ih, row 1 = bias_hh; column blocks z, r, h, which
//                               is cuDNN's r, z, n with the first two swapped
//
// Keras' LSTM has one bias, so the import splits it evenly (only the sum is identifiable) and
// the sum round-trips exactly; unit_forget_bias is an initializer only, so there is nothing to
// fold. The GRU keeps both biases (bias_hh_n sits inside r * (...), where it cannot merge), so
// its round trip is bit-exact. Equivalence needs Keras' defaults activation='tanh',
// recurrent_activation='sigmoid'; GRU(reset_after=False) computes another function and is
// rejected. docs/RNN_LAYOUT.md ("Gate orders", "Keras") gives the sources.
#pragma once

#include <string>

#include "policy/canonical_weights.h"
#include "policy/tensor.h"

namespace recur::policy::convert {

struct KerasOptions {
  // Prefix of layer k's variables, prepended to "kernel", "recurrent_kernel" and "bias".
  // "{layer}" is Keras' auto-name of layer k: lstm, lstm_1, lstm_2, ... (gru, gru_1, ...);
  // "{cell}" is lstm_cell / gru_cell; "{k}" is the layer index. The default gives the variable
  // names of a Sequential of LSTM layers ("lstm_1/lstm_cell/kernel", without TF's ":0"); a
  // Keras h5 weights file nests them as "{layer}/{layer}/{cell}/".
  std::string names = "{layer}/{cell}/";
};

// Throws recur::Error unless `weights` is an LSTM or GRU core.
TensorMap to_keras(const CanonicalWeights& weights, const KerasOptions& options = {});

// The core's shape from the tensors: LSTM or GRU from recurrent_kernel (H, 4H) or (H, 3H) under
// the names the template gives for that cell, input from layer 0's kernel, layers = how many
// consecutive layers have a kernel. Throws recur::Error for GRU(reset_after=False) (a (3H) bias).
CoreSpec infer_keras_spec(const TensorMap& tensors, const KerasOptions& options = {});

// Throws recur::Error for a spec other than LSTM or GRU, a missing tensor or one with the wrong
// shape (naming the tensor, its shape and the expected one). Other tensors are ignored.
CanonicalWeights from_keras(const TensorMap& tensors, const CoreSpec& spec,
                            const KerasOptions& options = {});

}  // namespace recur::policy::convert
