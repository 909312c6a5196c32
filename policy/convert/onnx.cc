// The ONNX export (policy/convert/onnx.h) through the protobuf classes of libonnx: the only file
// of recur that sees ONNX's headers (so the graph builder, the export and read_onnx stay together
// here rather than in smaller files). Values flow as [batch, features] through the normalizer,
// MLPs and heads, and as [1, batch, features] (seq = 1, ONNX's recurrent layout 0) through the
// cores, so that fused and unrolled layers chain the same way.
#include "policy/convert/onnx.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <span>

#include <fmt/ranges.h>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/version.h"
#include "policy/canonical_weights.h"
#include "policy/mlp.h"
#include "policy/obs_normalizer.h"
#include "policy/squashed_action.h"

namespace recur::policy::convert {
namespace {

using onnx::AttributeProto;
using onnx::TensorProto;

constexpr const char* kSkip = "-";

// Appends nodes and initializers to a graph; every value gets a unique, readable name.
class GraphBuilder {
 public:
  explicit GraphBuilder(onnx::GraphProto& graph) : g_(graph) {}

  // One node. An output named "" gets a fresh name from the node's; one named kSkip is an
  // optional output left out (ONNX's empty name). Returns the node.
  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& scope) {
    onnx::NodeProto& n = *g_.add_node();
    n.set_op_type(op);
    n.set_name(fmt::format("{}/{}_{}", scope, op, counter_++));
    for (const auto& in : inputs) n.add_input(in);
    for (size_t k = 0; k < outputs.size(); ++k) {
      const std::string& out = outputs[k];
      n.add_output(out == kSkip          ? std::string()
                   : !out.empty()        ? out
                   : outputs.size() == 1 ? n.name()
                                         : fmt::format("{}:{}", n.name(), k));
    }
    return n;
  }
  // A one-output node; returns its output's name (out, or a fresh one).
  std::string op(const std::string& op, const std::vector<std::string>& inputs,
                 const std::string& scope, const std::string& out = "") {
    return node(op, inputs, {out}, scope).output(0);
  }

  std::string floats(const std::string& name, const std::vector<int64_t>& dims,
                     std::span<const float> values) {
    TensorProto& t = *g_.add_initializer();
    t.set_name(name);
    t.set_data_type(TensorProto::FLOAT);
    for (int64_t d : dims) t.add_dims(d);
    // raw_data is little-endian float32, as recur's own buffers on every machine it builds for.
    t.set_raw_data(
        std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
    return name;
  }
  std::string scalar(const std::string& name, float v) { return floats(name, {}, {&v, 1}); }
  std::string ints(const std::string& name, const std::vector<int64_t>& values) {
    TensorProto& t = *g_.add_initializer();
    t.set_name(name);
    t.set_data_type(TensorProto::INT64);
    t.add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t.add_int64_data(v);
    return name;
  }

 private:
  onnx::GraphProto& g_;
  int counter_ = 0;
};

void set_int(onnx::NodeProto& n, const std::string& name, int64_t v) {
  AttributeProto& a = *n.add_attribute();
  a.set_name(name);
  a.set_type(AttributeProto::INT);
  a.set_i(v);
}

void set_strings(onnx::NodeProto& n, const std::string& name,
                 const std::vector<std::string>& values) {
  AttributeProto& a = *n.add_attribute();
  a.set_name(name);
  a.set_type(AttributeProto::STRINGS);
  for (const auto& v : values) a.add_strings(v);
}

// x (batch, in) through every Linear (Gemm with W (out, in), as nn.Linear stores it) and
// activation of mlp; the last output is named `out` when given.
std::string add_mlp(GraphBuilder& gb, Mlp& mlp, std::string x, const std::string& scope,
                    const std::string& out = "") {
  const int n = mlp.num_layers();
  for (int k = 0; k < n; ++k) {
    const Linear l = mlp.layer(k);
    const std::string p = fmt::format("{}.{}.", scope, k);
    const std::string w = gb.floats(p + "weight", {l.out(), l.in()}, l.weight());
    const std::string b = gb.floats(p + "bias", {l.out()}, l.bias());
    const bool activated = k + 1 < n || mlp.spec().activate_output;
    onnx::NodeProto& gemm = gb.node("Gemm", {x, w, b}, {activated ? "" : out}, scope);
    set_int(gemm, "transB", 1);
    x = gemm.output(0);
    if (activated)
      x = gb.op(mlp.spec().activation == Activation::kTanh ? "Tanh" : "Relu", {x}, scope,
                k + 1 == n ? out : "");
  }
  return x;
}

// Rows of a (gates * H, cols) matrix (or a (gates * H) vector with cols = 1) in another gate
// order: block j of the result is block order[j] of w.
std::vector<float> permute_gates(const std::vector<float>& w, int H, size_t cols,
                                 const std::vector<int>& order) {
  const size_t block = static_cast<size_t>(H) * cols;
  std::vector<float> out;
  out.reserve(w.size());
  for (int g : order) {
    const auto first = w.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(g) * block);
    out.insert(out.end(), first, first + static_cast<std::ptrdiff_t>(block));
  }
  return out;
}

// ONNX's fused gate orders from recur's (cuDNN's): LSTM i,o,f,c <- i,f,g,o; GRU z,r,h <- r,z,n.
std::vector<int> onnx_gate_order(CellType cell) {
  switch (cell) {
    case CellType::kLstm:
      return {0, 3, 1, 2};
    case CellType::kGru:
      return {1, 0, 2};
    default:
      return {0};
  }
}

struct LayerState {
  std::string h, c;  // [1, batch, H]; c empty without a cell state
};

// One layer as ONNX's fused LSTM / GRU / RNN node with seq = 1: x [1, batch, in] -> next state.
LayerState fused_layer(GraphBuilder& gb, const LayerWeights& w, const CoreSpec& spec, int k,
                       const std::string& x, const LayerState& in, const std::string& scope) {
  const int H = spec.hidden, G = spec.gates(), cols = spec.layer_input(k);
  const auto order = onnx_gate_order(spec.cell);
  const std::string p = fmt::format("{}.l{}.", scope, k);
  const std::string W =
      gb.floats(p + "W", {1, G * H, cols}, permute_gates(w.weight_ih, H, cols, order));
  const std::string R = gb.floats(p + "R", {1, G * H, H}, permute_gates(w.weight_hh, H, H, order));
  std::vector<float> bias = permute_gates(w.bias_ih, H, 1, order);
  const std::vector<float> rb = permute_gates(w.bias_hh, H, 1, order);
  bias.insert(bias.end(), rb.begin(), rb.end());
  const std::string B = gb.floats(p + "B", {1, 2 * G * H}, bias);
  LayerState out;
  if (spec.cell == CellType::kLstm) {
    onnx::NodeProto& n =
        gb.node("LSTM", {x, W, R, B, "", in.h, in.c}, {kSkip, p + "h", p + "c"}, scope);
    set_int(n, "hidden_size", H);
    out = {n.output(1), n.output(2)};
  } else {
    onnx::NodeProto& n = gb.node(spec.cell == CellType::kGru ? "GRU" : "RNN",
                                 {x, W, R, B, "", in.h}, {kSkip, p + "h"}, scope);
    set_int(n, "hidden_size", H);
    // PyTorch's and cuDNN's GRU apply r after the recurrent product: r * (R_n h + b_Rn).
    if (spec.cell == CellType::kGru) set_int(n, "linear_before_reset", 1);
    if (spec.cell == CellType::kRnnRelu) set_strings(n, "activations", {"Relu"});
    if (spec.cell == CellType::kRnnTanh) set_strings(n, "activations", {"Tanh"});
    out = {n.output(1), ""};
  }
  // Y_h is [dirs = 1, batch, H]: already the next layer's X [seq = 1, batch, H].
  return out;
}

// [W_ih | W_hh]^T: (in_k + H, G*H) row-major, so that [x, h] times it gives all gate blocks in
// recur's order; row r < in_k is column r of W_ih, row in_k + j column j of W_hh.
std::vector<float> stacked_transpose(const LayerWeights& w, int in_k, int H, int G) {
  std::vector<float> wt(static_cast<size_t>(in_k + H) * G * H);
  for (int r = 0; r < G * H; ++r) {
    for (int i = 0; i < in_k; ++i)
      wt[static_cast<size_t>(i) * G * H + r] = w.weight_ih[static_cast<size_t>(r) * in_k + i];
    for (int j = 0; j < H; ++j)
      wt[static_cast<size_t>(in_k + j) * G * H + r] = w.weight_hh[static_cast<size_t>(r) * H + j];
  }
  return wt;
}

// One LSTM layer with cuDNN's cell clip as primitive ops (core_spec.h):
//   gates = [x, h] [W_ih | W_hh]^T + b_ih + b_hh -> i, f, g, o (recur's order, no permutation)
//   c' = f * clip(c) + i * g,  h' = o * tanh(clip(c')),  c' returned raw.
LayerState clipped_lstm_layer(GraphBuilder& gb, const LayerWeights& w, const CoreSpec& spec, int k,
                              const std::string& x, const LayerState& in,
                              const std::string& scope) {
  const int H = spec.hidden, in_k = spec.layer_input(k), G = 4;
  const std::string p = fmt::format("{}.l{}.", scope, k);
  const std::vector<float> wt = stacked_transpose(w, in_k, H, G);
  std::vector<float> bias(w.bias_ih);
  for (size_t r = 0; r < bias.size(); ++r) bias[r] += w.bias_hh[r];
  const std::string WT = gb.floats(p + "W_T", {in_k + H, G * H}, wt);
  const std::string B = gb.floats(p + "bias", {G * H}, bias);
  const std::string lo = gb.scalar(p + "clip_min", -spec.cell_clip);
  const std::string hi = gb.scalar(p + "clip_max", spec.cell_clip);
  const std::string split = gb.ints(p + "split", {H, H, H, H});

  onnx::NodeProto& cat = gb.node("Concat", {x, in.h}, {""}, scope);
  set_int(cat, "axis", 2);
  const std::string gates = gb.op("Add", {gb.op("MatMul", {cat.output(0), WT}, scope), B}, scope);
  onnx::NodeProto& parts = gb.node("Split", {gates, split}, {"", "", "", ""}, scope);
  set_int(parts, "axis", 2);
  const std::string i = gb.op("Sigmoid", {parts.output(0)}, scope);
  const std::string f = gb.op("Sigmoid", {parts.output(1)}, scope);
  const std::string g = gb.op("Tanh", {parts.output(2)}, scope);
  const std::string o = gb.op("Sigmoid", {parts.output(3)}, scope);
  const std::string c_read = gb.op("Clip", {in.c, lo, hi}, scope);
  const std::string c =
      gb.op("Add", {gb.op("Mul", {f, c_read}, scope), gb.op("Mul", {i, g}, scope)}, scope, p + "c");
  const std::string h =
      gb.op("Mul", {o, gb.op("Tanh", {gb.op("Clip", {c, lo, hi}, scope)}, scope)}, scope, p + "h");
  return {h, c};
}

// One minGRU layer as primitive ops (core_spec.h; ONNX has no minGRU node):
//   [z_pre, h~] = x W_ih^T + b_ih,  z = sigmoid(z_pre),  h' = h + z * (h~ - h)
// (= (1 - z) h + z h~, the form the CPU executors compute). mingru_highway has a third block p:
//   s = sigmoid(p),  out = below + s * (h' - below)  (= s h' + (1 - s) below; layer 0: s * h')
// where below is x, this layer's input, from layer 1 on; *out gets the highway's output (left
// alone for plain mingru).
LayerState mingru_layer(GraphBuilder& gb, const LayerWeights& w, const CoreSpec& spec, int k,
                        const std::string& x, const LayerState& in, const std::string& scope,
                        std::string* out) {
  const int H = spec.hidden, in_k = spec.layer_input(k), G = spec.gates();
  const std::string p = fmt::format("{}.l{}.", scope, k);
  std::vector<float> wt(static_cast<size_t>(in_k) * G * H);  // W_ih^T: (in_k, G*H)
  for (int r = 0; r < G * H; ++r)
    for (int i = 0; i < in_k; ++i)
      wt[static_cast<size_t>(i) * G * H + r] = w.weight_ih[static_cast<size_t>(r) * in_k + i];
  const std::string WT = gb.floats(p + "W_T", {in_k, G * H}, wt);
  const std::string B = gb.floats(p + "bias", {G * H}, w.bias_ih);
  const std::string split = gb.ints(p + "split", std::vector<int64_t>(static_cast<size_t>(G), H));
  const std::string pre = gb.op("Add", {gb.op("MatMul", {x, WT}, scope), B}, scope);
  onnx::NodeProto& parts =
      gb.node("Split", {pre, split}, std::vector<std::string>(static_cast<size_t>(G)), scope);
  set_int(parts, "axis", 2);
  const std::string z = gb.op("Sigmoid", {parts.output(0)}, scope);
  const std::string delta = gb.op("Sub", {parts.output(1), in.h}, scope);
  const std::string h = gb.op("Add", {in.h, gb.op("Mul", {z, delta}, scope)}, scope, p + "h");
  if (has_highway_stack(spec.cell)) {
    const std::string gate = gb.op("Sigmoid", {parts.output(2)}, scope);
    *out = k == 0
               ? gb.op("Mul", {gate, h}, scope)
               : gb.op("Add", {x, gb.op("Mul", {gate, gb.op("Sub", {h, x}, scope)}, scope)}, scope);
  }
  return {h, ""};
}

// Layer norm over the last axis of v (opset 13 has no LayerNormalization node): the CPU
// executors' op order, (v - mean) * (1 / sqrt(var + eps)) * gain + shift, var the mean of the
// squared centred values (gate_math::layer_norm_row).
std::string layer_norm(GraphBuilder& gb, const std::string& v, const std::string& gain,
                       const std::string& shift, const std::string& eps, const std::string& scope,
                       const std::string& out = "") {
  const auto mean = [&](const std::string& t) {
    onnx::NodeProto& n = gb.node("ReduceMean", {t}, {""}, scope);
    AttributeProto& a = *n.add_attribute();
    a.set_name("axes");
    a.set_type(AttributeProto::INTS);
    a.add_ints(-1);
    set_int(n, "keepdims", 1);
    return n.output(0);
  };
  const std::string d = gb.op("Sub", {v, mean(v)}, scope);
  const std::string var = mean(gb.op("Mul", {d, d}, scope));
  const std::string r =
      gb.op("Reciprocal", {gb.op("Sqrt", {gb.op("Add", {var, eps}, scope)}, scope)}, scope);
  return gb.op("Add", {gb.op("Mul", {gb.op("Mul", {d, r}, scope), gain}, scope), shift}, scope,
               out);
}

// One layer-norm LSTM layer as primitive ops (core_spec.h, LSTM_LN):
//   gates = [x, h] [W_ih | W_hh]^T (no bias), reshaped [1, batch, 4, H] so that one layer norm
//   normalizes each gate block with its own gain and shift row; i, f, g, o; c' = LN_c(f c + i g),
//   h' = o tanh(c').
LayerState layer_norm_lstm_layer(GraphBuilder& gb, const LayerWeights& w, const CoreSpec& spec,
                                 int k, const std::string& x, const LayerState& in,
                                 const std::string& scope) {
  const int H = spec.hidden, in_k = spec.layer_input(k), G = 4;
  const std::string p = fmt::format("{}.l{}.", scope, k);
  const std::vector<float> wt = stacked_transpose(w, in_k, H, G);
  const std::string WT = gb.floats(p + "W_T", {in_k + H, G * H}, wt);
  const auto gate_rows = static_cast<std::ptrdiff_t>(G * H);
  const std::string gain =
      gb.floats(p + "norm_weight", {G, H}, std::span(w.norm_weight).first(G * H));
  const std::string shift = gb.floats(p + "norm_bias", {G, H}, std::span(w.norm_bias).first(G * H));
  const std::string c_gain =
      gb.floats(p + "norm_weight_c", {H}, std::span(w.norm_weight).subspan(gate_rows));
  const std::string c_shift =
      gb.floats(p + "norm_bias_c", {H}, std::span(w.norm_bias).subspan(gate_rows));
  const std::string eps = gb.scalar(p + "norm_epsilon", spec.norm_epsilon);
  const std::string blocks = gb.ints(p + "blocks_shape", {0, 0, G, H});
  const std::string flat = gb.ints(p + "gates_shape", {0, 0, G * H});
  const std::string split = gb.ints(p + "split", {H, H, H, H});

  onnx::NodeProto& cat = gb.node("Concat", {x, in.h}, {""}, scope);
  set_int(cat, "axis", 2);
  const std::string pre =
      gb.op("Reshape", {gb.op("MatMul", {cat.output(0), WT}, scope), blocks}, scope);
  const std::string normed =
      gb.op("Reshape", {layer_norm(gb, pre, gain, shift, eps, scope), flat}, scope);
  onnx::NodeProto& parts = gb.node("Split", {normed, split}, {"", "", "", ""}, scope);
  set_int(parts, "axis", 2);
  const std::string i = gb.op("Sigmoid", {parts.output(0)}, scope);
  const std::string f = gb.op("Sigmoid", {parts.output(1)}, scope);
  const std::string g = gb.op("Tanh", {parts.output(2)}, scope);
  const std::string o = gb.op("Sigmoid", {parts.output(3)}, scope);
  const std::string c_raw =
      gb.op("Add", {gb.op("Mul", {f, in.c}, scope), gb.op("Mul", {i, g}, scope)}, scope);
  const std::string c = layer_norm(gb, c_raw, c_gain, c_shift, eps, scope, p + "c");
  const std::string h = gb.op("Mul", {o, gb.op("Tanh", {c}, scope)}, scope, p + "h");
  return {h, c};
}

// A core: x [1, batch, in] and its state inputs ({prefix}h_in, {prefix}c_in, zeroed where
// reset [1, batch, 1]) -> the last layer's h [1, batch, H]; writes {prefix}h_out / c_out.
std::string add_core(GraphBuilder& gb, const CanonicalWeights& weights, const std::string& x,
                     const std::string& reset, const std::string& zero, const std::string& prefix) {
  const CoreSpec& spec = weights.spec;
  const std::string scope = prefix + "core";
  const bool lstm = has_cell_state(spec.cell);
  const std::string h0 = gb.op("Where", {reset, zero, prefix + "h_in"}, scope);
  const std::string c0 = lstm ? gb.op("Where", {reset, zero, prefix + "c_in"}, scope) : "";
  // Layer k's [1, batch, H] of a state [layers, batch, H].
  const std::string slice_axis = spec.layers > 1 ? gb.ints(scope + ".slice_axis", {0}) : "";
  const auto layer_of = [&](const std::string& all, int k) {
    if (spec.layers == 1) return all;
    const std::string at = fmt::format("{}.l{}.", scope, k);
    return gb.op("Slice", {all, at + "start", at + "end", slice_axis}, scope);
  };
  for (int k = 0; spec.layers > 1 && k < spec.layers; ++k) {
    gb.ints(fmt::format("{}.l{}.start", scope, k), {k});
    gb.ints(fmt::format("{}.l{}.end", scope, k), {k + 1});
  }
  std::vector<std::string> hs, cs;
  std::string in = x;
  for (int k = 0; k < spec.layers; ++k) {
    const LayerState state{layer_of(h0, k), lstm ? layer_of(c0, k) : ""};
    const LayerWeights& w = weights.layers[static_cast<size_t>(k)];
    std::string highway;  // mingru_highway's layer output
    const LayerState next =
        is_mingru(spec.cell)             ? mingru_layer(gb, w, spec, k, in, state, scope, &highway)
        : spec.cell == CellType::kLstmLn ? layer_norm_lstm_layer(gb, w, spec, k, in, state, scope)
        : lstm && spec.cell_clip > 0     ? clipped_lstm_layer(gb, w, spec, k, in, state, scope)
                                         : fused_layer(gb, w, spec, k, in, state, scope);
    hs.push_back(next.h);
    if (lstm) cs.push_back(next.c);
    // A residual minGRU stack outputs h_k + out_{k-1} from layer 1 on; a highway its own output
    // (core_spec.h).
    in = !highway.empty()                         ? highway
         : k > 0 && has_residual_stack(spec.cell) ? gb.op("Add", {next.h, in}, scope)
                                                  : next.h;
  }
  set_int(gb.node("Concat", hs, {prefix + "h_out"}, scope), "axis", 0);
  if (lstm) set_int(gb.node("Concat", cs, {prefix + "c_out"}, scope), "axis", 0);
  return in;
}

// A squashed actor's head (policy/squashed_action.h, the op order of its float32 functions):
//   kTanhGaussian: head [batch, 2d] -> Split -> mean, raw;
//                  log_std = kLogStdMin + (kLogStdMax - kLogStdMin) / 2 * (tanh(raw) + 1)
//   kTanh:         head [batch, d] = mean
//   actions = clamp(low + 1/2 (tanh(mean) + 1) (high - low), low, high)   (the mode's env action)
void add_squashed_head(GraphBuilder& gb, const PolicySpec& spec, Mlp& actor_head,
                       const std::string& h) {
  const int64_t d = spec.action_dim;
  const std::string one = gb.scalar("actor.one", 1.0f);
  std::string mean;
  if (spec.squash == Squash::kTanhGaussian) {
    const std::string head = add_mlp(gb, actor_head, h, "actor");
    onnx::NodeProto& parts =
        gb.node("Split", {head, gb.ints("actor.split", {d, d})}, {"mean", ""}, "actor");
    set_int(parts, "axis", 1);
    mean = parts.output(0);
    // squash_log_std's T(0.5) * T(kLogStdMax - kLogStdMin), folded as the host folds it.
    const float half_range = 0.5f * (kLogStdMax - kLogStdMin);
    gb.op("Add",
          {gb.scalar("actor.log_std_min", kLogStdMin),
           gb.op("Mul",
                 {gb.scalar("actor.log_std_half_range", half_range),
                  gb.op("Add", {gb.op("Tanh", {parts.output(1)}, "actor"), one}, "actor")},
                 "actor")},
          "actor", "log_std");
  } else {
    mean = add_mlp(gb, actor_head, h, "actor", "mean");
  }
  std::vector<float> range(spec.action_low.size());
  for (size_t j = 0; j < range.size(); ++j) range[j] = spec.action_high[j] - spec.action_low[j];
  const std::string low = gb.floats("action_low", {d}, spec.action_low);
  const std::string high = gb.floats("action_high", {d}, spec.action_high);
  const std::string scaled =
      gb.op("Mul",
            {gb.op("Mul",
                   {gb.scalar("actor.half", 0.5f),
                    gb.op("Add", {gb.op("Tanh", {mean}, "actor"), one}, "actor")},
                   "actor"),
             gb.floats("action_range", {d}, range)},
            "actor");
  gb.op("Max", {gb.op("Min", {gb.op("Add", {low, scaled}, "actor"), high}, "actor"), low}, "actor",
        "actions");
}

void declare(onnx::ValueInfoProto& v, const OnnxTensorInfo& info) {
  v.set_name(info.name);
  v.set_doc_string(info.doc);
  auto& t = *v.mutable_type()->mutable_tensor_type();
  t.set_elem_type(info.type == "int64" ? TensorProto::INT64 : TensorProto::FLOAT);
  auto& shape = *t.mutable_shape();
  for (const auto& d : info.shape) {
    auto& dim = *shape.add_dim();
    if (d == "batch")
      dim.set_dim_param(d);
    else
      dim.set_dim_value(std::stoll(d));
  }
}

std::string describe(const OnnxTensorInfo& t) {
  return fmt::format("{}: {} [{}]", t.name, t.type, fmt::join(t.shape, ", "));
}

std::string describe_all(const std::vector<OnnxTensorInfo>& ts) {
  std::vector<std::string> parts;
  for (const auto& t : ts) parts.push_back(describe(t));
  return fmt::format("{}", fmt::join(parts, "; "));
}

// The tensors the actor reads must be finite numbers; optimizer state ("optim.") is not read.
void check_finite(const TensorMap& tensors) {
  for (const auto& [name, t] : tensors) {
    if (name.starts_with("optim.")) continue;
    for (size_t i = 0; i < t.data.size(); ++i)
      RECUR_CHECK(std::isfinite(t.data[i]),
                  "tensor '{}' holds {} at index {}: recur exports only policies whose "
                  "parameters and normalizer statistics are finite (retrain, or export an "
                  "earlier checkpoint)",
                  name, t.data[i], i);
  }
}

// Whether a known box clamps anything: an all-infinite box is no box. A squashed policy maps into
// its own box (the spec's): one given here must be that one.
bool check_box(const PolicySpec& spec, const OnnxExportOptions& o) {
  if (spec.squash != Squash::kNone) {
    RECUR_CHECK((o.action_low.empty() && o.action_high.empty()) ||
                    (o.action_low == spec.action_low && o.action_high == spec.action_high),
                "the action box given to the export (low [{}], high [{}]) is not the squashed "
                "policy's own (policy.action_low [{}], policy.action_high [{}]); its actions are "
                "mapped into its own box: give that box or none",
                fmt::join(o.action_low, ", "), fmt::join(o.action_high, ", "),
                fmt::join(spec.action_low, ", "), fmt::join(spec.action_high, ", "));
    return true;
  }
  if (o.action_low.empty() && o.action_high.empty()) return false;
  RECUR_CHECK(spec.action_kind == ActionKind::kContinuous,
              "an action box was given for a discrete policy; only continuous actions are "
              "clamped");
  const auto d = static_cast<size_t>(spec.action_dim);
  RECUR_CHECK(o.action_low.size() == d && o.action_high.size() == d,
              "the action box has {} low and {} high bounds; the policy's actions have {}",
              o.action_low.size(), o.action_high.size(), d);
  bool finite = false;
  for (size_t j = 0; j < d; ++j) {
    RECUR_CHECK(o.action_low[j] <= o.action_high[j],
                "the action box's low {} exceeds its high {} in dimension {}", o.action_low[j],
                o.action_high[j], j);
    finite = finite || std::isfinite(o.action_low[j]) || std::isfinite(o.action_high[j]);
  }
  return finite;
}

// Normalizer: the float32 statistics ObsNormalizer::normalize uses, in its order of ops, so the
// normalized observations are bit-identical to recur's. Returns the normalized observation.
std::string add_obs_normalizer(GraphBuilder& gb, const ObsNormalizer& normalizer, int64_t od) {
  const auto mean = normalizer.normalize_mean(), std = normalizer.normalize_std();
  const float obs_clip = normalizer.config().clip;
  return gb.op(
      "Clip",
      {gb.op("Div",
             {gb.op("Sub", {"obs", gb.floats("obs_norm.mean", {od}, mean)}, "obs_norm"),
              gb.floats("obs_norm.std", {od}, std)},
             "obs_norm"),
       gb.scalar("obs_norm.clip_min", -obs_clip), gb.scalar("obs_norm.clip_max", obs_clip)},
      "obs_norm");
}

// The actor's head and the deterministic action (Categorical::mode, DiagGaussian::mode,
// TanhGaussian::mode, TanhDeterministic::mode). An unsquashed mean is clamped to [low, high]
// when a box is given (both empty: none); a squashed one maps into the spec's box itself.
void add_actor_head(GraphBuilder& gb, const PolicySpec& spec, Mlp& actor_head,
                    const std::string& feature, const std::vector<float>& log_std,
                    const std::vector<float>& low, const std::vector<float>& high) {
  if (spec.squash != Squash::kNone) {
    add_squashed_head(gb, spec, actor_head, feature);
  } else if (spec.action_kind == ActionKind::kDiscrete) {
    const std::string logits = add_mlp(gb, actor_head, feature, "actor", "logits");
    onnx::NodeProto& argmax = gb.node("ArgMax", {logits}, {"actions"}, "actor");
    set_int(argmax, "axis", 1);
    set_int(argmax, "keepdims", 0);
  } else {
    const std::string mu = add_mlp(gb, actor_head, feature, "actor", "mean");
    gb.op("Identity", {gb.floats("actor.log_std", {spec.action_dim}, log_std)}, "actor", "log_std");
    if (!high.empty()) {
      const std::string hi = gb.floats("action_high", {spec.action_dim}, high);
      const std::string lo = gb.floats("action_low", {spec.action_dim}, low);
      gb.op("Max", {gb.op("Min", {mu, hi}, "actor"), lo}, "actor", "actions");
    } else {
      gb.op("Identity", {mu}, "actor", "actions");
    }
  }
}

// What a user needs to drive the model: metadata_props (keys unique, as the checker wants) and
// the doc string. `low`/`high`: the box the actions are clamped or squashed into (empty: none).
void describe_model(onnx::ModelProto& model, const PolicySpec& spec,
                    const OnnxExportOptions& options, const OnnxInterface& io, float obs_clip,
                    const std::vector<float>& low, const std::vector<float>& high) {
  const bool discrete = spec.action_kind == ActionKind::kDiscrete;
  const bool squashed = spec.squash != Squash::kNone;
  std::map<std::string, std::string> meta = options.metadata;
  for (const auto& [k, val] : spec.to_metadata()) meta[k] = val;
  meta["recur.format"] = kOnnxFormat;
  meta["recur.version"] = RECUR_VERSION_STRING;
  meta["inputs"] = describe_all(io.inputs);
  meta["outputs"] = describe_all(io.outputs);
  meta["state_layout"] =
      "[layers, batch, hidden] per core (cuDNN / nn.LSTM); zeros start an episode; feed each "
      "*_out back as the matching *_in";
  meta["episode_start"] = "nonzero: the row's state is zeroed before the step";
  meta["obs_norm.clip"] = fmt::format("{}", obs_clip);
  meta["actions"] =
      discrete        ? "argmax of logits"
      : squashed      ? "action_low + (tanh(mean) + 1) (action_high - action_low) / 2 (the "
                        "deterministic tanh-squashed action)"
      : !high.empty() ? "mean clamped to [action_low, action_high]"
                      : "mean (the action box was not known: clamp it as the env does)";
  if (!high.empty()) {
    meta["action_low"] = fmt::format("{}", fmt::join(low, ","));
    meta["action_high"] = fmt::format("{}", fmt::join(high, ","));
  }
  meta["core.ops"] = spec.cell == CellType::kMinGru ? "unrolled minGRU step (MatMul, Sigmoid)"
                     : has_highway_stack(spec.cell)
                         ? "unrolled minGRU step with gated highway (MatMul, Sigmoid)"
                     : spec.cell == CellType::kLstmLn
                         ? "unrolled layer-norm LSTM step (MatMul, ReduceMean layer norm)"
                     : has_cell_state(spec.cell) && spec.cell_clip > 0
                         ? "unrolled LSTM step (cuDNN cell clip)"
                         : "fused ONNX " + std::string(spec.cell == CellType::kLstm  ? "LSTM"
                                                       : spec.cell == CellType::kGru ? "GRU"
                                                                                     : "RNN");
  for (const auto& [k, val] : meta) {
    auto& prop = *model.add_metadata_props();
    prop.set_key(k);
    prop.set_value(val);
  }
  model.set_doc_string(fmt::format(
      "recur policy ({} {} x{}, {} actions): one step of `recur eval --deterministic` for a "
      "batch of envs.\nInputs: {}.\nOutputs: {}.\nState: {}.",
      to_string(spec.cell), spec.hidden, spec.layers, discrete ? "discrete" : "continuous",
      describe_all(io.inputs), describe_all(io.outputs), meta["state_layout"]));
}

onnx::ModelProto build_model(const PolicySpec& spec, const TensorMap& tensors,
                             const OnnxExportOptions& options) {
  spec.validate();
  check_finite(tensors);
  const bool clamp_actions = check_box(spec, options);
  // The box the actions are squashed or clamped into (the squashed policy's own, else the one
  // given); empty when there is none.
  const bool squashed = spec.squash != Squash::kNone;
  const std::vector<float> box_low = !clamp_actions ? std::vector<float>{}
                                     : squashed     ? spec.action_low
                                                    : options.action_low;
  const std::vector<float> box_high = !clamp_actions ? std::vector<float>{}
                                      : squashed     ? spec.action_high
                                                     : options.action_high;
  // The parts the actor is made of, loaded by their own loaders (which name a missing or
  // misshapen tensor), so the graph holds exactly what PolicyActor::load would hold.
  ObsNormalizer normalizer(spec.obs_dim, spec.normalizer_config());  // clips at spec.obs_clip
  normalizer.load_tensors(tensors, "obs_norm.");
  const int towers = spec.shared_core ? 1 : 2;
  std::vector<Mlp> encoders;
  std::vector<CanonicalWeights> cores;
  for (int c = 0; c < towers; ++c) {
    const std::string p = c == 0 ? "" : "critic_";
    if (!spec.encoder.empty()) {
      encoders.emplace_back(spec.encoder_spec());
      encoders.back().load_tensors(tensors, p + "encoder.");
    }
    cores.push_back(CanonicalWeights::from_tensors(spec.core_spec(), tensors, p + "core."));
  }
  Mlp actor_head(spec.actor_head_spec()), critic_head(spec.critic_head_spec());
  actor_head.load_tensors(tensors, "actor.");
  critic_head.load_tensors(tensors, "critic.");
  const bool discrete = spec.action_kind == ActionKind::kDiscrete;
  const std::vector<float> log_std = discrete ? std::vector<float>{} : read_log_std(spec, tensors);

  onnx::ModelProto model;
  model.set_ir_version(kOnnxIrVersion);
  auto& opset = *model.add_opset_import();
  opset.set_domain("");
  opset.set_version(kOnnxOpset);
  model.set_producer_name("recur");
  model.set_producer_version(RECUR_VERSION_STRING);
  onnx::GraphProto& graph = *model.mutable_graph();
  graph.set_name("recur_policy");
  const OnnxInterface io = onnx_interface(spec);
  for (const auto& t : io.inputs) declare(*graph.add_input(), t);
  for (const auto& t : io.outputs) declare(*graph.add_output(), t);
  GraphBuilder gb(graph);

  const float obs_clip = normalizer.config().clip;
  const std::string nobs = add_obs_normalizer(gb, normalizer, spec.obs_dim);
  // reset [1, batch, 1]: true where episode_start is nonzero, as PolicyActor's uint8 flags.
  const std::string zero = gb.scalar("zero", 0.0f);
  const std::string reset =
      gb.op("Unsqueeze",
            {gb.op("Not", {gb.op("Equal", {"episode_start", zero}, "reset")}, "reset"),
             gb.ints("reset.axes", {0, 2})},
            "reset");
  const std::string seq_axis = gb.ints("seq_axis", {0});

  // The towers: [encoder ->] core -> h [batch, H].
  std::vector<std::string> features;
  for (int c = 0; c < towers; ++c) {
    const std::string p = c == 0 ? "" : "critic_";
    const std::string x = spec.encoder.empty()
                              ? nobs
                              : add_mlp(gb, encoders[static_cast<size_t>(c)], nobs, p + "encoder");
    const std::string x3 = gb.op("Unsqueeze", {x, seq_axis}, p + "core");
    const std::string h3 = add_core(gb, cores[static_cast<size_t>(c)], x3, reset, zero, p);
    features.push_back(gb.op("Squeeze", {h3, seq_axis}, p + "core"));
  }

  add_actor_head(gb, spec, actor_head, features[0], log_std, box_low, box_high);
  const std::string v = add_mlp(gb, critic_head, features.back(), "critic");
  gb.op("Squeeze", {v, gb.ints("value_axis", {1})}, "critic", "value");

  describe_model(model, spec, options, io, obs_clip, box_low, box_high);
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {  // a graph recur built wrong: a bug in recur
    detail::throw_internal(__FILE__, __LINE__,
                           fmt::format("onnx::checker rejects the export: {}", e.what()).c_str());
  }
  return model;
}

std::string type_name(int32_t elem_type) {
  switch (elem_type) {
    case TensorProto::FLOAT:
      return "float32";
    case TensorProto::INT64:
      return "int64";
    default:
      return fmt::format("elem_type {}", elem_type);
  }
}

OnnxTensorInfo read_info(const onnx::ValueInfoProto& v) {
  OnnxTensorInfo info{v.name(), type_name(v.type().tensor_type().elem_type()), {}, ""};
  for (const auto& d : v.type().tensor_type().shape().dim())
    info.shape.push_back(d.has_dim_param() ? d.dim_param() : std::to_string(d.dim_value()));
  return info;
}

}  // namespace

bool onnx_export_available() {
  return true;
}

void require_onnx_export() {}

std::string policy_to_onnx(const PolicySpec& spec, const TensorMap& tensors,
                           const OnnxExportOptions& options) {
  std::string bytes;
  RECUR_ASSERT(build_model(spec, tensors, options).SerializeToString(&bytes));
  return bytes;
}

void save_policy_onnx(const std::filesystem::path& path, const PolicySpec& spec,
                      const TensorMap& tensors, const OnnxExportOptions& options) {
  const std::string bytes = policy_to_onnx(spec, tensors, options);
  try {
    write_file_atomic(path, bytes);
  } catch (const Error& e) {
    throw Error(fmt::format("cannot write the ONNX model {}: {}", path.string(), e.what()));
  }
}

OnnxModelInfo read_onnx(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  RECUR_CHECK(in.good(), "cannot open ONNX model {}", path.string());
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  onnx::ModelProto model;
  RECUR_CHECK(model.ParseFromString(bytes), "{} is not an ONNX model (protobuf parse failed)",
              path.string());
  try {
    onnx::checker::check_model(model);
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(true, 1, false));
  } catch (const std::exception& e) {
    throw Error(fmt::format("{} fails ONNX's checks: {}", path.string(), e.what()));
  }
  OnnxModelInfo info;
  info.ir_version = model.ir_version();
  for (const auto& o : model.opset_import())
    if (o.domain().empty()) info.opset = o.version();
  info.producer = model.producer_name();
  info.doc_string = model.doc_string();
  for (const auto& v : model.graph().input()) info.inputs.push_back(read_info(v));
  for (const auto& v : model.graph().output()) info.outputs.push_back(read_info(v));
  for (const auto& p : model.metadata_props()) info.metadata[p.key()] = p.value();
  for (const auto& n : model.graph().node()) info.op_types.push_back(n.op_type());
  return info;
}

}  // namespace recur::policy::convert
