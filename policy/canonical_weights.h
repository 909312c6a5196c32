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
// in_k = spec.input for k = 0, else spec.hidden. Gate block g of weight_ih is cuDNN's
// linLayerID g; of weight_hh, linLayerID G + g (docs/RNN_LAYOUT.md, "cuDNN's weight space").
#pragma once

#include <string>
#include <vector>

#include "core/rng.h"
#include "policy/core_spec.h"
#include "policy/tensor.h"

namespace recur::policy {

struct LayerWeights {
  std::vector<float> weight_ih;  // (G*H, in_k)
  std::vector<float> weight_hh;  // (G*H, H)
  std::vector<float> bias_ih;    // (G*H)
  std::vector<float> bias_hh;    // (G*H)
  bool operator==(const LayerWeights&) const = default;
};

struct CanonicalWeights {
  CoreSpec spec;
  std::vector<LayerWeights> layers;

  // All zeros, sized for spec (validated).
  static CanonicalWeights zeros(const CoreSpec& spec);
  // PyTorch's default init: every value ~ U(-1/sqrt(H), 1/sqrt(H)); then, for LSTM, both forget
  // gate biases set so that their sum is forget_bias (TF-style forget bias as an initializer).
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
