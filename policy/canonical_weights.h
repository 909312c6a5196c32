// Canonical weights of the recurrent core: one format for checkpoints, converters and every
// executor. Per layer k, exactly PyTorch's nn.LSTM / nn.GRU / nn.RNN parameters:
//
//   weight_ih_l{k}  (G*H, in_k)   row-major; rows in gate blocks of H, gates in cuDNN order
//   weight_hh_l{k}  (G*H, H)      (LSTM i,f,g,o; GRU r,z,n; RNN one block)
//   bias_ih_l{k}    (G*H)         cuDNN's b_W (ids 0..G-1)
//   bias_hh_l{k}    (G*H)         cuDNN's b_R (ids G..2G-1)
//
// minGRU (G = 2, blocks z then h~) has only weight_ih_l{k} (W_z; W_h) and bias_ih_l{k} (b_z; b_h):
// no recurrent weights, so weight_hh and bias_hh are empty and written as no tensor (as in
// PyTorch minGRU modules, one Linear(in_k, 2H) with a bias; its chunk order may differ).
//
// The layer-norm LSTM (lstm_ln, G = 4, gates i, f, g, o) has weight_ih_l{k} and weight_hh_l{k} but
// no bias_ih / bias_hh (empty), and instead
//   norm_weight_l{k}  (5, H)   LayerNorm gains (gamma) of the gate blocks i, f, g, o and of c
//   norm_bias_l{k}    (5, H)   LayerNorm shifts (beta), same rows; beta_f includes TF's forget_bias
// Every other cell has empty norm vectors (and writes no such tensor).
//
// in_k = spec.input for k = 0, else spec.hidden. Gate block g of weight_ih is cuDNN's
// linLayerID g; of weight_hh, linLayerID G + g (docs/RNN_LAYOUT.md, "cuDNN's weight space").
#pragma once

#include <array>
#include <string>
#include <vector>

#include "core/rng.h"
#include "policy/core_spec.h"
#include "policy/tensor.h"

namespace recur::policy {

struct LayerWeights {
  std::vector<float> weight_ih;    // (G*H, in_k)
  std::vector<float> weight_hh;    // (G*H, H)
  std::vector<float> bias_ih;      // (G*H)
  std::vector<float> bias_hh;      // (G*H)
  std::vector<float> norm_weight;  // (5H) lstm_ln only
  std::vector<float> norm_bias;    // (5H) lstm_ln only
  // Every tensor in the canonical flat order (flat_layout.h); loops over all parameters use it.
  std::array<std::vector<float>*, 6> all() {
    return {&weight_ih, &weight_hh, &bias_ih, &bias_hh, &norm_weight, &norm_bias};
  }
  std::array<const std::vector<float>*, 6> all() const {
    return {&weight_ih, &weight_hh, &bias_ih, &bias_hh, &norm_weight, &norm_bias};
  }
  bool operator==(const LayerWeights&) const = default;
};

struct CanonicalWeights {
  CoreSpec spec;
  std::vector<LayerWeights> layers;

  // All zeros, sized for spec (validated).
  static CanonicalWeights zeros(const CoreSpec& spec);
  // PyTorch's default init: every value ~ U(-1/sqrt(H), 1/sqrt(H)); then, for LSTM, both forget
  // gate biases set so that their sum is forget_bias (TF-style forget bias as an initializer).
  // lstm_ln: matrices as above, LayerNorm gains 1 and shifts 0 (TF's norm_gain / norm_shift
  // defaults) except beta_f = forget_bias (TF adds forget_bias there at run time).
  static CanonicalWeights random(const CoreSpec& spec, Rng& rng, float forget_bias = 0.0f);

  // Tensors named as PyTorch names them, with `prefix` ("core." in a policy checkpoint).
  TensorMap to_tensors(const std::string& prefix = "") const;
  // The inverse; throws recur::Error naming a missing tensor or a wrong shape.
  static CanonicalWeights from_tensors(const CoreSpec& spec, const TensorMap& tensors,
                                       const std::string& prefix = "");

  // Total number of parameters.
  size_t size() const;
  bool operator==(const CanonicalWeights&) const = default;
};

}  // namespace recur::policy
