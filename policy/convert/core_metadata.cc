#include "policy/convert/core_metadata.h"

#include <charconv>

#include <fmt/format.h>

#include "core/error.h"
#include "policy/convert/layout.h"

namespace recur::policy::convert {

namespace {

const std::string& require_key(const Checkpoint& checkpoint, const std::string& key) {
  const auto it = checkpoint.metadata.find(key);
  RECUR_CHECK(it != checkpoint.metadata.end(),
              "checkpoint metadata has no '{}' (the other core keys are there); add it or remove "
              "them all to infer the core from the tensor shapes",
              key);
  return it->second;
}

template <class T>
T parse_number(const std::string& key, const std::string& text) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  RECUR_CHECK(ec == std::errc() && end == text.data() + text.size(),
              "checkpoint metadata '{}' is '{}', not a number", key, text);
  return value;
}

CoreSpec infer_from_tensors(const TensorMap& tensors, const std::string& prefix) {
  const std::string what = "a canonical core (PyTorch nn.LSTM/nn.GRU names)";
  const Tensor& hh = require_tensor(tensors, prefix + "weight_hh_l0", what);
  const Tensor& ih = require_tensor(tensors, prefix + "weight_ih_l0", what);
  const bool ok = hh.shape.size() == 2 && hh.shape[1] > 0 && hh.shape[0] % hh.shape[1] == 0 &&
                  ih.shape.size() == 2 && ih.shape[0] == hh.shape[0];
  const int64_t gates = ok ? hh.shape[0] / hh.shape[1] : 0;
  RECUR_CHECK(
      gates == 4 || gates == 3,
      "cannot infer the core from '{}' {} and '{}' {}: expected [4H, H] (lstm) or [3H, H] "
      "(gru) and [G*H, input]; an rnn_tanh/rnn_relu/mingru core needs the metadata key '{}cell'",
      prefix + "weight_hh_l0", shape_string(hh.shape), prefix + "weight_ih_l0",
      shape_string(ih.shape), prefix);
  CoreSpec spec;
  spec.cell = gates == 4 ? CellType::kLstm : CellType::kGru;
  spec.hidden = static_cast<int>(hh.shape[1]);
  spec.input = static_cast<int>(ih.shape[1]);
  spec.layers = 0;
  while (tensors.count(fmt::format("{}weight_ih_l{}", prefix, spec.layers))) ++spec.layers;
  return spec;
}

}  // namespace

void write_core_metadata(const CoreSpec& spec, Checkpoint& checkpoint, const std::string& prefix) {
  auto& m = checkpoint.metadata;
  m[prefix + "cell"] = std::string(to_string(spec.cell));
  m[prefix + "input"] = std::to_string(spec.input);
  m[prefix + "hidden"] = std::to_string(spec.hidden);
  m[prefix + "layers"] = std::to_string(spec.layers);
  if (spec.cell_clip > 0) m[prefix + "cell_clip"] = fmt::format("{}", spec.cell_clip);
  if (has_layer_norm(spec.cell)) m[prefix + "norm_epsilon"] = fmt::format("{}", spec.norm_epsilon);
}

CoreSpec read_core_spec(const Checkpoint& checkpoint, const std::string& prefix) {
  CoreSpec spec;
  if (checkpoint.metadata.count(prefix + "cell")) {
    spec.cell = parse_cell_type(require_key(checkpoint, prefix + "cell"));
    for (auto [key, field] : {std::pair{"input", &spec.input}, std::pair{"hidden", &spec.hidden},
                              std::pair{"layers", &spec.layers}})
      *field = parse_number<int>(prefix + key, require_key(checkpoint, prefix + key));
    const auto clip = checkpoint.metadata.find(prefix + "cell_clip");
    if (clip != checkpoint.metadata.end())
      spec.cell_clip = parse_number<float>(prefix + "cell_clip", clip->second);
    const auto eps = checkpoint.metadata.find(prefix + "norm_epsilon");
    if (eps != checkpoint.metadata.end())
      spec.norm_epsilon = parse_number<float>(prefix + "norm_epsilon", eps->second);
  } else {
    spec = infer_from_tensors(checkpoint.tensors, prefix);
  }
  spec.validate();
  return spec;
}

}  // namespace recur::policy::convert
