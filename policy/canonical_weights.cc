#include "policy/canonical_weights.h"

#include <algorithm>
#include <cmath>

#include <fmt/ranges.h>

#include "core/error.h"

namespace recur::policy {

CanonicalWeights CanonicalWeights::zeros(const CoreSpec& spec) {
  spec.validate();
  CanonicalWeights w;
  w.spec = spec;
  const auto gh = static_cast<size_t>(spec.gates() * spec.hidden);
  const auto rh = static_cast<size_t>(spec.recurrent_rows());  // 0 for minGRU
  for (int k = 0; k < spec.layers; ++k) {
    LayerWeights l;
    l.weight_ih.assign(gh * static_cast<size_t>(spec.layer_input(k)), 0.0f);
    l.weight_hh.assign(rh * static_cast<size_t>(spec.hidden), 0.0f);
    l.bias_ih.assign(static_cast<size_t>(spec.bias_rows()), 0.0f);
    l.bias_hh.assign(static_cast<size_t>(spec.recurrent_bias_rows()), 0.0f);
    l.norm_weight.assign(static_cast<size_t>(spec.norm_size()), 0.0f);
    l.norm_bias.assign(static_cast<size_t>(spec.norm_size()), 0.0f);
    w.layers.push_back(std::move(l));
  }
  return w;
}

CanonicalWeights CanonicalWeights::random(const CoreSpec& spec, Rng& rng, float forget_bias) {
  CanonicalWeights w = zeros(spec);
  const double bound = 1.0 / std::sqrt(static_cast<double>(spec.hidden));
  for (auto& l : w.layers)
    for (auto* v : {&l.weight_ih, &l.weight_hh, &l.bias_ih, &l.bias_hh})
      for (auto& x : *v) x = static_cast<float>(rng.uniform(-bound, bound));
  // (norm vectors are set below: they are not drawn, so other cells' draws are unchanged)
  if (has_layer_norm(spec.cell)) {
    const auto h = static_cast<size_t>(spec.hidden);
    for (auto& l : w.layers) {
      std::fill(l.norm_weight.begin(), l.norm_weight.end(), 1.0f);
      std::fill(l.norm_bias.begin(), l.norm_bias.end(), 0.0f);
      std::fill_n(l.norm_bias.begin() + h, h, forget_bias);  // block 1 = f
    }
  }
  if (spec.cell == CellType::kLstm) {
    const auto h = static_cast<size_t>(spec.hidden);
    for (auto& l : w.layers)
      for (size_t j = 0; j < h; ++j) {  // forget gate = block 1
        l.bias_ih[h + j] = forget_bias / 2;
        l.bias_hh[h + j] = forget_bias / 2;
      }
  }
  return w;
}

TensorMap CanonicalWeights::to_tensors(const std::string& prefix) const {
  TensorMap out;
  const int64_t gh = spec.gates() * spec.hidden;
  for (int k = 0; k < spec.layers; ++k) {
    const auto& l = layers[static_cast<size_t>(k)];
    const std::string s = "_l" + std::to_string(k);
    out[prefix + "weight_ih" + s] = Tensor({gh, spec.layer_input(k)}, l.weight_ih);
    if (has_gate_biases(spec.cell)) out[prefix + "bias_ih" + s] = Tensor({gh}, l.bias_ih);
    if (has_layer_norm(spec.cell)) {
      out[prefix + "norm_weight" + s] = Tensor({kNormGroups, spec.hidden}, l.norm_weight);
      out[prefix + "norm_bias" + s] = Tensor({kNormGroups, spec.hidden}, l.norm_bias);
    }
    if (!has_recurrent_weights(spec.cell)) continue;  // minGRU: no weight_hh / bias_hh tensors
    out[prefix + "weight_hh" + s] = Tensor({gh, spec.hidden}, l.weight_hh);
    if (has_gate_biases(spec.cell)) out[prefix + "bias_hh" + s] = Tensor({gh}, l.bias_hh);
  }
  return out;
}

CanonicalWeights CanonicalWeights::from_tensors(const CoreSpec& spec, const TensorMap& tensors,
                                                const std::string& prefix) {
  CanonicalWeights w = zeros(spec);
  const TensorMap want = w.to_tensors(prefix);
  for (int k = 0; k < spec.layers; ++k) {
    auto& l = w.layers[static_cast<size_t>(k)];
    const std::string s = "_l" + std::to_string(k);
    auto take = [&](const std::string& name, std::vector<float>& dst) {
      const auto it = tensors.find(prefix + name + s);
      RECUR_CHECK(it != tensors.end(), "tensor '{}' is missing (a {} core with {} layers needs it)",
                  prefix + name + s, to_string(spec.cell), spec.layers);
      const auto& expected = want.at(prefix + name + s).shape;
      RECUR_CHECK(it->second.shape == expected && it->second.data.size() == dst.size(),
                  "tensor '{}' has shape [{}], expected [{}] for {} with input {} hidden {}",
                  prefix + name + s, fmt::join(it->second.shape, ", "), fmt::join(expected, ", "),
                  to_string(spec.cell), spec.input, spec.hidden);
      dst = it->second.data;
    };
    take("weight_ih", l.weight_ih);
    if (has_gate_biases(spec.cell)) take("bias_ih", l.bias_ih);
    if (has_layer_norm(spec.cell)) {
      take("norm_weight", l.norm_weight);
      take("norm_bias", l.norm_bias);
    }
    if (!has_recurrent_weights(spec.cell)) continue;
    take("weight_hh", l.weight_hh);
    if (has_gate_biases(spec.cell)) take("bias_hh", l.bias_hh);
  }
  return w;
}

size_t CanonicalWeights::size() const {
  size_t n = 0;
  for (const auto& l : layers)
    for (const auto* t : l.all()) n += t->size();
  return n;
}

}  // namespace recur::policy
