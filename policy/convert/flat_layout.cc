#include "policy/convert/flat_layout.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/error.h"

namespace recur::policy {
namespace {

int64_t gate_block(const CoreSpec& spec) {
  return static_cast<int64_t>(spec.gates()) * spec.hidden;
}

// The entry's role, for messages: "layer 1 id 5 bias".
std::string describe(const OpaqueEntry& e) {
  return fmt::format("layer {} linLayerID {} {}", e.pseudo_layer, e.lin_id,
                     e.bias ? "bias" : "matrix");
}

}  // namespace

CanonicalOffsets canonical_offsets(const CoreSpec& spec, int layer) {
  const int64_t gh = gate_block(spec), rh = spec.recurrent_rows();  // rh = 0 for minGRU
  int64_t off = 0;
  for (int k = 0;; ++k) {
    CanonicalOffsets o;
    o.weight_ih = off;
    o.weight_hh = o.weight_ih + gh * spec.layer_input(k);
    o.bias_ih = o.weight_hh + rh * spec.hidden;
    o.bias_hh = o.bias_ih + spec.bias_rows();
    o.norm_weight = o.bias_hh + spec.recurrent_bias_rows();
    o.norm_bias = o.norm_weight + spec.norm_size();
    o.end = o.norm_bias + spec.norm_size();
    if (k == layer) return o;
    off = o.end;
  }
}

std::vector<float> flatten(const CanonicalWeights& weights) {
  std::vector<float> flat;
  flat.reserve(weights.size());
  for (const auto& l : weights.layers)
    for (const auto* t : l.all()) flat.insert(flat.end(), t->begin(), t->end());
  return flat;
}

CanonicalWeights unflatten(const CoreSpec& spec, std::span<const float> flat) {
  CanonicalWeights w = CanonicalWeights::zeros(spec);
  RECUR_CHECK_ARG(flat.size() == w.size(), "unflatten: {} floats, a {} core has {}", flat.size(),
                  to_string(spec.cell), w.size());
  size_t off = 0;
  for (auto& l : w.layers)
    for (auto* t : l.all()) {
      std::copy_n(flat.begin() + static_cast<std::ptrdiff_t>(off), t->size(), t->begin());
      off += t->size();
    }
  return w;
}

FlatLayout canonical_layout(const CoreSpec& spec) {
  spec.validate();
  FlatLayout l{"canonical", canonical_offsets(spec, spec.layers - 1).end, {}};
  l.position.resize(static_cast<size_t>(l.size));
  for (int64_t i = 0; i < l.size; ++i) l.position[static_cast<size_t>(i)] = i;
  return l;
}

StepLayerOffsets step_layer_offsets(const CoreSpec& spec, int layer) {
  require_cuda_core(spec);  // the CUDA step executor's layout
  const int columns = spec.cell == CellType::kGru ? 4 * spec.hidden : spec.gates() * spec.hidden;
  int64_t off = 0;
  for (int k = 0;; ++k) {
    StepLayerOffsets o;
    o.rows = spec.layer_input(k) + spec.hidden;
    o.columns = columns;
    o.w = off;
    o.bias_ih = o.w + static_cast<int64_t>(o.rows) * o.columns;
    o.bias_hh = o.bias_ih + spec.bias_rows();
    o.norm_weight = o.bias_hh + spec.bias_rows();
    o.norm_bias = o.norm_weight + spec.norm_size();
    o.end = o.norm_bias + spec.norm_size();
    if (k == layer) return o;
    off = o.end;
  }
}

FlatLayout step_layout(const CoreSpec& spec) {
  spec.validate();
  require_cuda_core(spec);
  const int64_t H = spec.hidden, gh = gate_block(spec);
  const bool gru = spec.cell == CellType::kGru;
  FlatLayout l{"step", step_layer_offsets(spec, spec.layers - 1).end, {}};
  l.position.resize(static_cast<size_t>(canonical_offsets(spec, spec.layers - 1).end));
  for (int k = 0; k < spec.layers; ++k) {
    const CanonicalOffsets c = canonical_offsets(spec, k);
    const StepLayerOffsets s = step_layer_offsets(spec, k);
    const int64_t in = spec.layer_input(k);
    // Canonical row r = g*H + j of weight_ih (G*H, in) is output column j of gate g; its column
    // i is input i. In w (K, C) that is row i (x rows) or in + i (h rows), column block * H + j.
    auto place = [&](int64_t canon_off, int64_t cols, int64_t row_base, bool recurrent) {
      for (int64_t r = 0; r < gh; ++r) {
        const int64_t g = r / H, j = r % H;
        const int64_t block = gru && g == 2 ? (recurrent ? 3 : 2) : g;
        for (int64_t i = 0; i < cols; ++i)
          l.position[static_cast<size_t>(canon_off + r * cols + i)] =
              s.w + (row_base + i) * s.columns + block * H + j;
      }
    };
    place(c.weight_ih, in, 0, false);
    if (has_recurrent_weights(spec.cell)) place(c.weight_hh, H, in, true);  // minGRU: h rows zero
    for (int64_t i = 0; i < spec.bias_rows(); ++i)
      l.position[static_cast<size_t>(c.bias_ih + i)] = s.bias_ih + i;
    for (int64_t i = 0; i < spec.recurrent_bias_rows(); ++i)
      l.position[static_cast<size_t>(c.bias_hh + i)] = s.bias_hh + i;
    for (int64_t i = 0; i < spec.norm_size(); ++i) {
      l.position[static_cast<size_t>(c.norm_weight + i)] = s.norm_weight + i;
      l.position[static_cast<size_t>(c.norm_bias + i)] = s.norm_bias + i;
    }
  }
  return l;
}

FlatLayout opaque_layout(const CoreSpec& spec, const OpaqueTable& table) {
  spec.validate();
  require_cudnn_core(spec);  // cuDNN's weight space: cuDNN has no minGRU or layer-norm LSTM
  const int G = spec.gates();
  const int64_t H = spec.hidden;
  RECUR_CHECK(table.size > 0, "cuDNN weight space: size {} floats", table.size);
  FlatLayout l{"cudnn", table.size, {}};
  l.position.assign(static_cast<size_t>(canonical_offsets(spec, spec.layers - 1).end), -1);

  // Which (layer, id, kind) were seen, and which buffer floats are taken (overlap check).
  std::vector<uint8_t> seen(static_cast<size_t>(spec.layers * 2 * G * 2), 0);
  std::vector<std::pair<int64_t, int64_t>> extents;  // [begin, end) of each placed tensor
  for (const OpaqueEntry& e : table.entries) {
    RECUR_CHECK(e.pseudo_layer >= 0 && e.pseudo_layer < spec.layers,
                "cuDNN weight space: {}: pseudo-layer outside 0..{}", describe(e), spec.layers - 1);
    RECUR_CHECK(e.lin_id >= 0 && e.lin_id < 2 * G,
                "cuDNN weight space: {}: linLayerID outside 0..{} for {}", describe(e), 2 * G - 1,
                to_string(spec.cell));
    uint8_t& mark = seen[static_cast<size_t>(((e.pseudo_layer * 2 * G) + e.lin_id) * 2 + e.bias)];
    RECUR_CHECK(!mark, "cuDNN weight space: {} reported twice", describe(e));
    mark = 1;

    const bool recurrent = e.lin_id >= G;
    const int64_t g = recurrent ? e.lin_id - G : e.lin_id;
    const int64_t width = recurrent ? H : spec.layer_input(e.pseudo_layer);
    const int64_t expected = e.bias ? H : H * width;
    int64_t numel = e.dims.empty() ? 0 : 1;
    for (int d : e.dims) numel *= d;
    // recur always uses DOUBLE_BIAS and LINEAR_INPUT: every matrix and bias must exist.
    RECUR_CHECK(e.offset >= 0 && numel > 0,
                "cuDNN weight space: {} is absent, but recur's cores (DOUBLE_BIAS, LINEAR_INPUT) "
                "need it",
                describe(e));
    RECUR_CHECK(numel == expected,
                "cuDNN weight space: {} has {} elements (dims {}), expected {} ({} x {})",
                describe(e), numel, fmt::join(e.dims, "x"), expected, H, e.bias ? 1 : width);
    RECUR_CHECK(e.offset + numel <= table.size,
                "cuDNN weight space: {} at offset {} (+{}) runs past the buffer of {} floats",
                describe(e), e.offset, numel, table.size);
    extents.emplace_back(e.offset, e.offset + numel);

    // Matrix (H, width) row-major: row j = output j of gate g, as canonical rows g*H + j.
    const CanonicalOffsets c = canonical_offsets(spec, e.pseudo_layer);
    const int64_t base = e.bias ? (recurrent ? c.bias_hh : c.bias_ih) + g * H
                                : (recurrent ? c.weight_hh : c.weight_ih) + g * H * width;
    for (int64_t i = 0; i < numel; ++i) l.position[static_cast<size_t>(base + i)] = e.offset + i;
  }
  for (int k = 0; k < spec.layers; ++k)
    for (int id = 0; id < 2 * G; ++id)
      for (int b = 0; b < 2; ++b)
        RECUR_CHECK(seen[static_cast<size_t>(((k * 2 * G) + id) * 2 + b)],
                    "cuDNN weight space: layer {} linLayerID {} {} was not reported", k, id,
                    b ? "bias" : "matrix");
  std::sort(extents.begin(), extents.end());
  for (size_t i = 1; i < extents.size(); ++i)
    RECUR_CHECK(extents[i].first >= extents[i - 1].second,
                "cuDNN weight space: tensors at offsets {} and {} overlap", extents[i - 1].first,
                extents[i].first);
  return l;
}

void scatter_canonical(const FlatLayout& layout, std::span<const float> canonical,
                       std::span<float> buffer) {
  RECUR_CHECK_ARG(canonical.size() == layout.position.size(),
                  "{} layout: {} canonical floats given, expected {}", layout.name,
                  canonical.size(), layout.position.size());
  RECUR_CHECK_ARG(buffer.size() == static_cast<size_t>(layout.size),
                  "{} layout: buffer of {} floats, expected {}", layout.name, buffer.size(),
                  layout.size);
  std::fill(buffer.begin(), buffer.end(), 0.0f);
  for (size_t i = 0; i < canonical.size(); ++i)
    buffer[static_cast<size_t>(layout.position[i])] = canonical[i];
}

void gather_canonical(const FlatLayout& layout, std::span<const float> buffer,
                      std::span<float> canonical) {
  RECUR_CHECK_ARG(canonical.size() == layout.position.size(),
                  "{} layout: room for {} canonical floats, expected {}", layout.name,
                  canonical.size(), layout.position.size());
  RECUR_CHECK_ARG(buffer.size() == static_cast<size_t>(layout.size),
                  "{} layout: buffer of {} floats, expected {}", layout.name, buffer.size(),
                  layout.size);
  for (size_t i = 0; i < canonical.size(); ++i)
    canonical[i] = buffer[static_cast<size_t>(layout.position[i])];
}

std::vector<int64_t> conversion_index(const FlatLayout& from, const FlatLayout& to) {
  RECUR_CHECK_ARG(from.position.size() == to.position.size(),
                  "layout conversion {} -> {}: {} vs {} canonical floats (different cores)",
                  from.name, to.name, from.position.size(), to.position.size());
  std::vector<int64_t> index(static_cast<size_t>(to.size), -1);
  for (size_t i = 0; i < to.position.size(); ++i)
    index[static_cast<size_t>(to.position[i])] = from.position[i];
  return index;
}

void apply_conversion(std::span<const int64_t> index, std::span<const float> src,
                      std::span<float> dst) {
  RECUR_CHECK_ARG(index.size() == dst.size(), "layout conversion: index {} vs destination {}",
                  index.size(), dst.size());
  for (size_t i = 0; i < dst.size(); ++i) {
    const int64_t j = index[i];
    RECUR_ASSERT(j < static_cast<int64_t>(src.size()));
    dst[i] = j >= 0 ? src[static_cast<size_t>(j)] : 0.0f;
  }
}

}  // namespace recur::policy
