// The layout maps behind every weight conversion (policy/convert/flat_layout.h), on a CPU:
// canonical <-> step layout (proved by running the block cell in that layout against the CPU
// step executor) and canonical <-> cuDNN opaque layouts built from tables the tests construct,
// contiguous as PyTorch observes it, with gaps, and reordered; plus every table defect cuDNN
// could hand us. A GPU only adds the cudnnGetRNNWeightParams queries that produce the table.
#include "policy/convert/flat_layout.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "policy/cpu/cpu_step_executor.h"

using namespace recur::policy;

namespace {

constexpr CellType kCells[] = {CellType::kLstm, CellType::kGru, CellType::kRnnTanh,
                               CellType::kRnnRelu};

CanonicalWeights random_weights(const CoreSpec& spec, uint64_t seed) {
  recur::Rng rng(seed);
  return CanonicalWeights::random(spec, rng, 1.0f);
}

// A table as cuDNN would report it. `order` permutes the emission of tensors; `gap` floats are
// left between consecutive tensors (and before the first).
OpaqueTable make_table(const CoreSpec& spec, int64_t gap, bool reorder) {
  struct Item {
    int layer, id;
    bool bias;
  };
  const int G = spec.gates();
  std::vector<Item> items;
  for (int k = 0; k < spec.layers; ++k) {
    for (int id = 0; id < 2 * G; ++id) items.push_back({k, id, false});  // PyTorch: matrices...
    for (int id = 0; id < 2 * G; ++id) items.push_back({k, id, true});   // ...then biases
  }
  if (reorder) {
    // Layers last-first, biases before matrices, recurrent ids before input ids, gates reversed.
    std::reverse(items.begin(), items.end());
    std::stable_partition(items.begin(), items.end(), [](const Item& i) { return i.bias; });
  }
  OpaqueTable t;
  int64_t off = gap;
  for (const Item& i : items) {
    OpaqueEntry e;
    e.pseudo_layer = i.layer;
    e.lin_id = i.id;
    e.bias = i.bias;
    e.offset = off;
    const int width = i.id >= G ? spec.hidden : spec.layer_input(i.layer);
    // cuDNN reports 3-d descriptors: (1, H, width) for matrices, (1, H, 1) for biases.
    e.dims = i.bias ? std::vector<int>{1, spec.hidden, 1} : std::vector<int>{1, spec.hidden, width};
    off += static_cast<int64_t>(spec.hidden) * (i.bias ? 1 : width) + gap;
    t.entries.push_back(e);
  }
  t.size = off;
  return t;
}

std::string error_of(const CoreSpec& spec, const OpaqueTable& t) {
  try {
    opaque_layout(spec, t);
  } catch (const recur::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("canonical weights flatten and unflatten exactly") {
  for (CellType cell : kCells) {
    const CoreSpec spec{cell, 3, 5, 3, 0};
    const CanonicalWeights w = random_weights(spec, 7);
    const std::vector<float> flat = flatten(w);
    CHECK(flat.size() == w.size());
    CHECK(unflatten(spec, flat) == w);
    const CanonicalOffsets o = canonical_offsets(spec, 1);
    CHECK(flat[static_cast<size_t>(o.weight_hh)] == w.layers[1].weight_hh[0]);
    CHECK(flat[static_cast<size_t>(o.bias_hh + 2)] == w.layers[1].bias_hh[2]);
    CHECK(canonical_offsets(spec, 2).end == static_cast<int64_t>(w.size()));
  }
}

TEST_CASE("every layout round trips canonical weights bit-exactly") {
  for (CellType cell : kCells)
    for (int layers = 1; layers <= 3; ++layers) {
      const CoreSpec spec{cell, 3, 4, layers, 0};
      const std::vector<float> canon = flatten(random_weights(spec, 11 + layers));
      for (const FlatLayout& layout : {canonical_layout(spec), step_layout(spec),
                                       opaque_layout(spec, make_table(spec, 0, false)),
                                       opaque_layout(spec, make_table(spec, 3, false)),
                                       opaque_layout(spec, make_table(spec, 5, true))}) {
        CAPTURE(layout.name);
        CAPTURE(to_string(cell));
        CAPTURE(layers);
        std::vector<float> buffer(static_cast<size_t>(layout.size), 123.0f);
        scatter_canonical(layout, canon, buffer);
        std::vector<float> back(canon.size());
        gather_canonical(layout, buffer, back);
        CHECK(back == canon);
        // Positions are distinct; everything not mapped (gaps, GRU zero blocks) is zero.
        std::vector<int> hits(buffer.size(), 0);
        for (int64_t p : layout.position) ++hits[static_cast<size_t>(p)];
        CHECK(*std::max_element(hits.begin(), hits.end()) == 1);
        for (size_t i = 0; i < buffer.size(); ++i)
          if (!hits[i]) CHECK(buffer[i] == 0.0f);
      }
    }
}

TEST_CASE("the opaque map puts each gate where the table says") {
  // LSTM, 2 layers, reordered with gaps: layer 1's forget gate of R (linLayerID 5) must hold
  // rows H..2H-1 of weight_hh_l1, and its bias bias_hh_l1[H..2H).
  const CoreSpec spec{CellType::kLstm, 3, 4, 2, 0};
  const CanonicalWeights w = random_weights(spec, 3);
  const OpaqueTable table = make_table(spec, 2, true);
  const FlatLayout layout = opaque_layout(spec, table);
  std::vector<float> buffer(static_cast<size_t>(layout.size));
  scatter_canonical(layout, flatten(w), buffer);
  const int H = spec.hidden;
  for (const OpaqueEntry& e : table.entries) {
    if (e.pseudo_layer != 1 || e.lin_id != 5) continue;
    const auto& src = e.bias ? w.layers[1].bias_hh : w.layers[1].weight_hh;
    const size_t n = e.bias ? static_cast<size_t>(H) : static_cast<size_t>(H) * H;
    for (size_t i = 0; i < n; ++i)
      CHECK(buffer[static_cast<size_t>(e.offset) + i] == src[n + i]);  // gate block 1 = f
  }
}

TEST_CASE("a direct layout conversion equals going through canonical") {
  for (CellType cell : kCells) {
    const CoreSpec spec{cell, 2, 3, 2, 0};
    const std::vector<float> canon = flatten(random_weights(spec, 5));
    const FlatLayout opaque = opaque_layout(spec, make_table(spec, 1, true));
    const FlatLayout step = step_layout(spec);
    std::vector<float> opaque_buf(static_cast<size_t>(opaque.size));
    scatter_canonical(opaque, canon, opaque_buf);
    // learner (opaque) -> actor (step) in one gather, as kernels::launch_gather does on a GPU
    std::vector<float> direct(static_cast<size_t>(step.size), 9.0f);
    apply_conversion(conversion_index(opaque, step), opaque_buf, direct);
    std::vector<float> via(static_cast<size_t>(step.size));
    scatter_canonical(step, canon, via);
    CHECK(direct == via);
    // and back
    std::vector<float> again(static_cast<size_t>(opaque.size), 9.0f);
    apply_conversion(conversion_index(step, opaque), direct, again);
    CHECK(again == opaque_buf);
  }
}

// The CUDA step kernel's arithmetic in plain C++ over the step layout: gates = [x, h] * w, then
// the cell update with both biases. Equal to the CPU step executor => the layout the GPU uses
// holds each weight where the kernel expects it.
TEST_CASE("the block cell computed in the step layout equals the CPU step executor") {
  for (CellType cell : kCells) {
    const CoreSpec spec{cell, 3, 4, 2, cell == CellType::kLstm ? 0.8f : 0.0f};
    const int B = 3, H = spec.hidden, L = spec.layers, T = 6;
    CAPTURE(to_string(cell));
    const CanonicalWeights w = random_weights(spec, 21);
    const FlatLayout layout = step_layout(spec);
    std::vector<float> buf(static_cast<size_t>(layout.size));
    scatter_canonical(layout, flatten(w), buf);

    CpuStepExecutor cpu(spec, B);
    cpu.load(w);
    recur::Rng rng(4);
    const int S = spec.state_size();
    std::vector<float> state(static_cast<size_t>(B) * S);
    for (auto& v : state) v = static_cast<float>(rng.uniform(-0.9, 0.9));
    cpu.set_states(state);
    // Emulated state: h[k][b][j], c[k][b][j]
    auto h_at = [&](int k, int b, int j) -> float& {
      return state[static_cast<size_t>(b) * S + static_cast<size_t>(k) * H + j];
    };
    auto c_at = [&](int k, int b, int j) -> float& {
      return state[static_cast<size_t>(b) * S + static_cast<size_t>(L + k) * H + j];
    };
    double max_err = 0;
    for (int t = 0; t < T; ++t) {
      std::vector<float> x(static_cast<size_t>(B) * spec.input);
      for (auto& v : x) v = static_cast<float>(rng.uniform(-1.5, 1.5));
      std::vector<uint8_t> start(static_cast<size_t>(B));
      for (auto& s : start) s = rng.uniform() < 0.3 ? 1 : 0;
      std::vector<float> h_cpu(static_cast<size_t>(B) * H);
      cpu.step(x, start, h_cpu);

      std::vector<double> in(x.begin(), x.end());  // (B, in_k) layer input
      for (int k = 0; k < L; ++k) {
        const StepLayerOffsets o = step_layer_offsets(spec, k);
        const int in_k = spec.layer_input(k);
        std::vector<double> next(static_cast<size_t>(B) * H);
        for (int b = 0; b < B; ++b) {
          if (start[static_cast<size_t>(b)])
            for (int j = 0; j < H; ++j) {
              h_at(k, b, j) = 0;
              if (cell == CellType::kLstm) c_at(k, b, j) = 0;  // only LSTM has c in its state
            }
          std::vector<double> xh(static_cast<size_t>(o.rows));
          for (int i = 0; i < in_k; ++i)
            xh[static_cast<size_t>(i)] = in[static_cast<size_t>(b * in_k + i)];
          for (int j = 0; j < H; ++j) xh[static_cast<size_t>(in_k + j)] = h_at(k, b, j);
          std::vector<double> g(static_cast<size_t>(o.columns), 0.0);
          for (int r = 0; r < o.rows; ++r)
            for (int col = 0; col < o.columns; ++col)
              g[static_cast<size_t>(col)] +=
                  xh[static_cast<size_t>(r)] * buf[static_cast<size_t>(o.w + r * o.columns + col)];
          auto bi = [&](int gate, int j) {
            return buf[static_cast<size_t>(o.bias_ih + gate * H + j)];
          };
          auto bh = [&](int gate, int j) {
            return buf[static_cast<size_t>(o.bias_hh + gate * H + j)];
          };
          auto sig = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
          for (int j = 0; j < H; ++j) {
            auto gate = [&](int q) {
              return g[static_cast<size_t>(q * H + j)] + bi(q, j) + bh(q, j);
            };
            double h_new = 0;
            if (cell == CellType::kLstm) {
              // cuDNN's MINMAX clip: raw state, clipped where read.
              const double bound = spec.cell_clip;
              const double c_old = std::clamp(double(c_at(k, b, j)), -bound, bound);
              const double c = sig(gate(1)) * c_old + sig(gate(0)) * std::tanh(gate(2));
              h_new = sig(gate(3)) * std::tanh(std::clamp(c, -bound, bound));
              c_at(k, b, j) = static_cast<float>(c);
            } else if (cell == CellType::kGru) {
              const double r = sig(gate(0)), z = sig(gate(1));
              const double n = std::tanh(g[static_cast<size_t>(2 * H + j)] + bi(2, j) +
                                         r * (g[static_cast<size_t>(3 * H + j)] + bh(2, j)));
              h_new = (1 - z) * n + z * h_at(k, b, j);
            } else if (cell == CellType::kRnnTanh) {
              h_new = std::tanh(gate(0));
            } else {
              h_new = std::max(0.0, gate(0));
            }
            next[static_cast<size_t>(b * H + j)] = h_new;
          }
          for (int j = 0; j < H; ++j)
            h_at(k, b, j) = static_cast<float>(next[static_cast<size_t>(b * H + j)]);
        }
        in = next;
      }
      for (size_t i = 0; i < h_cpu.size(); ++i)
        max_err = std::max(max_err, std::abs(in[i] - h_cpu[i]) / (1.0 + std::abs(in[i])));
    }
    // float executor vs a double emulation over 6 steps with resets: a few float ulps per step
    CHECK(max_err < 1e-5);
  }
}

TEST_CASE("defective cuDNN weight tables are refused with the entry named") {
  const CoreSpec spec{CellType::kGru, 3, 4, 2, 0};
  CHECK(error_of(spec, make_table(spec, 0, false)).empty());

  OpaqueTable t = make_table(spec, 0, false);
  t.entries.erase(t.entries.begin() + 7);  // layer 0, id 1 bias
  CHECK(error_of(spec, t).find("layer 0 linLayerID 1 bias was not reported") != std::string::npos);

  t = make_table(spec, 0, false);
  t.entries.push_back(t.entries[2]);
  CHECK(error_of(spec, t).find("reported twice") != std::string::npos);

  t = make_table(spec, 0, false);
  t.entries[3].dims = {1, 4, 3};  // id 3 is recurrent: expects 4 x 4
  CHECK(error_of(spec, t).find("layer 0 linLayerID 3 matrix has 12 elements") != std::string::npos);

  t = make_table(spec, 0, false);
  t.entries[1].offset = t.entries[0].offset + 1;
  CHECK(error_of(spec, t).find("overlap") != std::string::npos);

  t = make_table(spec, 0, false);
  t.size -= 1;
  CHECK(error_of(spec, t).find("runs past the buffer") != std::string::npos);

  t = make_table(spec, 0, false);
  t.entries[4].offset = -1;
  CHECK(error_of(spec, t).find("is absent") != std::string::npos);

  t = make_table(spec, 0, false);
  t.entries[0].lin_id = 6;  // GRU has ids 0..5
  CHECK(error_of(spec, t).find("linLayerID outside 0..5") != std::string::npos);

  t = make_table(spec, 0, false);
  t.entries[0].pseudo_layer = 2;
  CHECK(error_of(spec, t).find("pseudo-layer outside 0..1") != std::string::npos);
}

TEST_CASE("conversions refuse mismatched sizes") {
  const CoreSpec a{CellType::kLstm, 3, 4, 1, 0}, b{CellType::kLstm, 3, 4, 2, 0};
  CHECK_THROWS_AS(conversion_index(step_layout(a), step_layout(b)), std::invalid_argument);
  const FlatLayout l = step_layout(a);
  std::vector<float> canon(l.position.size()), small(static_cast<size_t>(l.size) - 1);
  CHECK_THROWS_AS(scatter_canonical(l, canon, small), std::invalid_argument);
  CHECK_THROWS_AS(unflatten(a, std::vector<float>(3)), std::invalid_argument);
}
