#include "policy/canonical_weights.h"

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
    l.bias_ih.assign(gh, 0.0f);
    l.bias_hh.assign(rh, 0.0f);
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
    out[prefix + "bias_ih" + s] = Tensor({gh}, l.bias_ih);
    if (!has_recurrent_weights(spec.cell)) continue;  // minGRU: no weight_hh / bias_hh tensors
    out[prefix + "weight_hh" + s] = Tensor({gh, spec.hidden}, l.weight_hh);
    out[prefix + "bias_hh" + s] = Tensor({gh}, l.bias_hh);
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
    take("bias_ih", l.bias_ih);
    if (!has_recurrent_weights(spec.cell)) continue;
    take("weight_hh", l.weight_hh);
    take("bias_hh", l.bias_hh);
  }
  return w;
}

size_t CanonicalWeights::size() const {
  size_t n = 0;
  for (const auto& l : layers)
    n += l.weight_ih.size() + l.weight_hh.size() + l.bias_ih.size() + l.bias_hh.size();
  return n;
}

}  // namespace recur::policy
