#include "policy/convert/layout.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"

namespace recur::policy::convert {

namespace {
size_t idx(int64_t a, int64_t b, int64_t cols) {
  return static_cast<size_t>(a * cols + b);
}
}  // namespace

void rows_to_columns(const std::vector<float>& src, int in, int hidden,
                     std::span<const int> slot_gate, std::vector<float>& dst, int row0) {
  const int64_t cols = static_cast<int64_t>(slot_gate.size()) * hidden;
  RECUR_ASSERT(src.size() == static_cast<size_t>(cols * in));
  RECUR_ASSERT(dst.size() >= static_cast<size_t>((row0 + in) * cols));
  for (int64_t s = 0; s < static_cast<int64_t>(slot_gate.size()); ++s)
    for (int64_t j = 0; j < hidden; ++j)
      for (int64_t r = 0; r < in; ++r)
        dst[idx(row0 + r, s * hidden + j, cols)] = src[idx(slot_gate[s] * hidden + j, r, in)];
}

void columns_to_rows(const std::vector<float>& src, int in, int hidden,
                     std::span<const int> slot_gate, std::vector<float>& dst, int row0) {
  const int64_t cols = static_cast<int64_t>(slot_gate.size()) * hidden;
  RECUR_ASSERT(dst.size() == static_cast<size_t>(cols * in));
  RECUR_ASSERT(src.size() >= static_cast<size_t>((row0 + in) * cols));
  for (int64_t s = 0; s < static_cast<int64_t>(slot_gate.size()); ++s)
    for (int64_t j = 0; j < hidden; ++j)
      for (int64_t r = 0; r < in; ++r)
        dst[idx(slot_gate[s] * hidden + j, r, in)] = src[idx(row0 + r, s * hidden + j, cols)];
}

std::vector<float> gates_to_slots(const std::vector<float>& src, int hidden,
                                  std::span<const int> slot_gate) {
  RECUR_ASSERT(src.size() == slot_gate.size() * static_cast<size_t>(hidden));
  std::vector<float> dst(src.size());
  for (int64_t s = 0; s < static_cast<int64_t>(slot_gate.size()); ++s)
    for (int64_t j = 0; j < hidden; ++j) dst[idx(s, j, hidden)] = src[idx(slot_gate[s], j, hidden)];
  return dst;
}

std::vector<float> slots_to_gates(const std::vector<float>& src, int hidden,
                                  std::span<const int> slot_gate) {
  RECUR_ASSERT(src.size() == slot_gate.size() * static_cast<size_t>(hidden));
  std::vector<float> dst(src.size());
  for (int64_t s = 0; s < static_cast<int64_t>(slot_gate.size()); ++s)
    for (int64_t j = 0; j < hidden; ++j) dst[idx(slot_gate[s], j, hidden)] = src[idx(s, j, hidden)];
  return dst;
}

void check_sizes(const CanonicalWeights& weights) {
  const CoreSpec& spec = weights.spec;
  spec.validate();
  RECUR_CHECK_ARG(weights.layers.size() == static_cast<size_t>(spec.layers),
                  "canonical weights have {} layers, their spec says {}", weights.layers.size(),
                  spec.layers);
  const auto gh = static_cast<size_t>(spec.gates() * spec.hidden);
  const auto rh = static_cast<size_t>(spec.recurrent_rows());  // 0 for minGRU
  const auto norm = static_cast<size_t>(spec.norm_size());     // 0 but for lstm_ln
  for (int k = 0; k < spec.layers; ++k) {
    const LayerWeights& l = weights.layers[static_cast<size_t>(k)];
    RECUR_CHECK_ARG(l.weight_ih.size() == gh * static_cast<size_t>(spec.layer_input(k)) &&
                        l.weight_hh.size() == rh * static_cast<size_t>(spec.hidden) &&
                        l.bias_ih.size() == static_cast<size_t>(spec.bias_rows()) &&
                        l.bias_hh.size() == static_cast<size_t>(spec.recurrent_bias_rows()) &&
                        l.norm_weight.size() == norm && l.norm_bias.size() == norm,
                    "canonical weights of layer {} are not sized for {} input {} hidden {}", k,
                    to_string(spec.cell), spec.layer_input(k), spec.hidden);
  }
}

void split_bias_sum(const std::vector<float>& sum, std::vector<float>& bias_ih,
                    std::vector<float>& bias_hh) {
  bias_ih.resize(sum.size());
  bias_hh.resize(sum.size());
  for (size_t i = 0; i < sum.size(); ++i) {
    // Halving is exact for normal floats; sum - half is exact by Sterbenz even when it is not,
    // so the two always add back to the sum bit for bit.
    bias_ih[i] = sum[i] * 0.5f;
    bias_hh[i] = sum[i] - bias_ih[i];
  }
}

std::vector<float> bias_sum(const std::vector<float>& bias_ih, const std::vector<float>& bias_hh) {
  RECUR_ASSERT(bias_ih.size() == bias_hh.size());
  std::vector<float> sum(bias_ih.size());
  for (size_t i = 0; i < sum.size(); ++i) sum[i] = bias_ih[i] + bias_hh[i];
  return sum;
}

bool names_per_layer(const std::string& name_template) {
  return name_template.find("{k}") != std::string::npos ||
         name_template.find("{layer}") != std::string::npos;
}

std::string expand_names(const std::string& name_template, int k, int layers,
                         const std::string& layer_base, const std::string& cell_name) {
  RECUR_CHECK(names_per_layer(name_template) || layers <= 1,
              "name template '{}' has no {{k}} or {{layer}}, so the {} layers would share names; "
              "put {{k}} (layer index) or {{layer}} (Keras layer name) in it",
              name_template, layers);
  const std::string layer = k == 0 ? layer_base : fmt::format("{}_{}", layer_base, k);
  std::string out;
  for (size_t i = 0; i < name_template.size();) {
    auto subst = [&](std::string_view key, const std::string& value) {
      if (name_template.compare(i, key.size(), key) != 0) return false;
      out += value;
      i += key.size();
      return true;
    };
    if (subst("{k}", std::to_string(k)) || subst("{layer}", layer) || subst("{cell}", cell_name))
      continue;
    out += name_template[i++];
  }
  return out;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

const Tensor& require_tensor(const TensorMap& tensors, const std::string& name,
                             const std::string& what) {
  const auto it = tensors.find(name);
  if (it == tensors.end()) {
    // The names present are the quickest hint at a wrong prefix or name template.
    std::vector<std::string> present;
    for (const auto& [n, t] : tensors) {
      if (present.size() == 6) {
        present.push_back("...");
        break;
      }
      present.push_back("'" + n + "'");
    }
    throw Error(fmt::format(
        "tensor '{}' is missing ({} needs it); the {} tensors present: {}", name, what,
        tensors.size(), present.empty() ? "none" : fmt::format("{}", fmt::join(present, ", "))));
  }
  RECUR_CHECK(it->second.numel() == static_cast<int64_t>(it->second.data.size()),
              "tensor '{}' has shape {} but {} values", name, shape_string(it->second.shape),
              it->second.data.size());
  return it->second;
}

const Tensor& require_tensor(const TensorMap& tensors, const std::string& name,
                             const std::vector<int64_t>& expected, const std::string& what) {
  const Tensor& t = require_tensor(tensors, name, what);
  RECUR_CHECK(t.shape == expected, "tensor '{}' has shape {}, expected {} for {}", name,
              shape_string(t.shape), shape_string(expected), what);
  return t;
}

int tf_kernel_input(const TensorMap& tensors, const std::string& name, int hidden,
                    const std::string& cell, const std::string& hidden_from) {
  const Tensor& kernel = require_tensor(tensors, name, cell + " layer 0");
  RECUR_CHECK(kernel.shape.size() == 2 && kernel.shape[0] > hidden && kernel.shape[1] == 4 * hidden,
              "tensor '{}' has shape {}, expected [input + {}, {}] for a {} kernel with hidden {} "
              "(from {})",
              name, shape_string(kernel.shape), hidden, 4 * hidden, cell, hidden, hidden_from);
  return static_cast<int>(kernel.shape[0]) - hidden;
}

int count_tf_layers(const TensorMap& tensors, const std::string& name_template) {
  int layers = 1;
  if (names_per_layer(name_template))
    while (tensors.count(expand_names(name_template, layers, layers + 1) + "kernel")) ++layers;
  return layers;
}

}  // namespace recur::policy::convert
