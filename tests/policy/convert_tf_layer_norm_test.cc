// The TF LayerNormBasicLSTMCell converter (policy/convert/tf_layer_norm_lstm.h): round trips, the
// exact placement of every block, and a numeric proof of the mapping: TF's cell written here in
// double from its definition (slots i, j, f, o of [x, h]·kernel, one LayerNorm per slot and one
// for the new c, forget_bias inside f's sigmoid, eps 1e-12) runs on the TF tensors, and recur's
// double reference and float CPU step executor run on the imported weights; over several steps
// from a non-zero state they must agree (a swapped j/f block is invisible at t = 0 from zero).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "policy/canonical_weights.h"
#include "policy/convert/tf_layer_norm_lstm.h"
#include "policy/cpu/cpu_step_executor.h"
#include "policy/reference_core.h"
#include "tests/support/rel_err.h"
#include "tests/support/swap_blocks.h"
#include "tests/support/temp_dir.h"

using namespace recur::policy;
using namespace recur::policy::convert;
using recur::Rng;
using recur::test::error_of;
using recur::test::rel_err;
using recur::test::swap_blocks;

namespace {

using Vec = std::vector<double>;

const std::string kScope0 = "rnn/multi_rnn_cell/cell_0/layer_norm_basic_lstm_cell/";
const std::string kScope1 = "rnn/multi_rnn_cell/cell_1/layer_norm_basic_lstm_cell/";
// TF's norm scopes in TF's slot order, then the cell state's.
const char* const kTfScopes[] = {"input/", "transform/", "forget/", "output/", "state/"};

CoreSpec ln_spec(int input, int hidden, int layers) {
  CoreSpec spec;
  spec.cell = CellType::kLstmLn;
  spec.input = input;
  spec.hidden = hidden;
  spec.layers = layers;
  return spec;
}

// What an import infers: the same shape with TF's layer_norm eps.
CoreSpec with_tf_eps(CoreSpec spec) {
  spec.norm_epsilon = 1e-12f;
  return spec;
}

// Values on a 2^-10 grid: adding or removing forget_bias = 1 to a shift in [-0.5, 0.5] is then
// exact in float, so TF's cell and the imported one see the same numbers and differ only by
// double rounding.
float on_grid(double v) {
  return static_cast<float>(std::round(v * 1024.0) / 1024.0);
}

// Matrices ~ U(-0.6, 0.6) (every gate in its non-linear range), gains ~ U(0.5, 1.5), shifts
// ~ U(-0.5, 0.5): away from TF's initial 1 and 0, so that a gain or shift in the wrong row shows.
CanonicalWeights random_ln(const CoreSpec& spec, Rng& rng) {
  CanonicalWeights w = CanonicalWeights::zeros(spec);
  for (auto& l : w.layers) {
    for (auto* v : {&l.weight_ih, &l.weight_hh})
      for (auto& x : *v) x = static_cast<float>(rng.uniform(-0.6, 0.6));
    for (auto& x : l.norm_weight) x = static_cast<float>(rng.uniform(0.5, 1.5));
    for (auto& x : l.norm_bias) x = static_cast<float>(rng.uniform(-0.5, 0.5));
  }
  return w;
}

// A TF file as TF would hold it, drawn directly in TF's names (not through the exporter).
TensorMap random_tf(const CoreSpec& spec, Rng& rng) {
  TensorMap tf;
  const int h = spec.hidden;
  for (int k = 0; k < spec.layers; ++k) {
    const std::string scope =
        "rnn/multi_rnn_cell/cell_" + std::to_string(k) + "/layer_norm_basic_lstm_cell/";
    Tensor kernel = Tensor::zeros({spec.layer_input(k) + h, 4 * h});
    for (auto& x : kernel.data) x = static_cast<float>(rng.uniform(-0.6, 0.6));
    tf[scope + "kernel"] = std::move(kernel);
    for (const char* name : kTfScopes) {
      Tensor gamma = Tensor::zeros({h}), beta = Tensor::zeros({h});
      for (auto& x : gamma.data) x = static_cast<float>(rng.uniform(0.5, 1.5));
      for (auto& x : beta.data) x = on_grid(rng.uniform(-0.5, 0.5));
      tf[scope + name + "gamma"] = std::move(gamma);
      tf[scope + name + "beta"] = std::move(beta);
    }
  }
  return tf;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

double sigmoid(double v) {
  return 1.0 / (1.0 + std::exp(-v));
}

// tf.contrib.layers.layer_norm over one row: biased variance, eps 1e-12, then gain and shift.
void tf_layer_norm(double* v, int n, const Tensor& gamma, const Tensor& beta) {
  double mean = 0;
  for (int j = 0; j < n; ++j) mean += v[j];
  mean /= n;
  double var = 0;
  for (int j = 0; j < n; ++j) var += (v[j] - mean) * (v[j] - mean);
  var /= n;
  const double inv = 1.0 / std::sqrt(var + 1e-12);
  for (int j = 0; j < n; ++j)
    v[j] = (v[j] - mean) * inv * gamma.data[static_cast<size_t>(j)] +
           beta.data[static_cast<size_t>(j)];
}

// One step of LayerNormBasicLSTMCell(layer_norm=True, dropout_keep_prob=1) under `scope`, from
// TF's tensors alone: c and h (H) updated in place.
void tf_cell(const TensorMap& tf, const std::string& scope, double forget_bias, const Vec& x,
             Vec& c, Vec& h) {
  const int n = static_cast<int>(h.size());
  const Tensor& kernel = tf.at(scope + "kernel");
  Vec args = x;
  args.insert(args.end(), h.begin(), h.end());  // [x, h]
  Vec z(4 * static_cast<size_t>(n), 0.0);
  for (size_t r = 0; r < args.size(); ++r)
    for (int col = 0; col < 4 * n; ++col)
      z[static_cast<size_t>(col)] += args[r] * kernel.data[r * 4 * static_cast<size_t>(n) + col];
  // Slots i, j, f, o; each normalized under its own scope.
  double* slot[4] = {z.data(), z.data() + n, z.data() + 2 * n, z.data() + 3 * n};
  for (int s = 0; s < 4; ++s) {
    const std::string base = scope + kTfScopes[s];
    tf_layer_norm(slot[s], n, tf.at(base + "gamma"), tf.at(base + "beta"));
  }
  const double *i = slot[0], *j = slot[1], *f = slot[2], *o = slot[3];
  for (int u = 0; u < n; ++u)
    c[u] = c[u] * sigmoid(f[u] + forget_bias) + sigmoid(i[u]) * std::tanh(j[u]);
  tf_layer_norm(c.data(), n, tf.at(scope + "state/gamma"), tf.at(scope + "state/beta"));
  for (int u = 0; u < n; ++u) h[u] = std::tanh(c[u]) * sigmoid(o[u]);
}

// A MultiRNNCell of `layers` TF cells (layer k + 1 reads layer k's new h) for T steps of B rows.
// state (B, S) in recur's layout per row: h of layers 0..L-1, then c of layers 0..L-1. Returns
// the top layer's h at every step, (T, B, H); state is left at the final state.
Vec tf_forward(const TensorMap& tf, const CoreSpec& spec, double forget_bias, int T, int B,
               const std::vector<float>& x, Vec& state) {
  const int H = spec.hidden, L = spec.layers, S = spec.state_size();
  Vec y;
  for (int t = 0; t < T; ++t) {
    for (int b = 0; b < B; ++b) {
      double* st = state.data() + static_cast<size_t>(b) * S;
      const auto row = x.begin() + (static_cast<ptrdiff_t>(t) * B + b) * spec.input;
      Vec in(row, row + spec.input);
      for (int k = 0; k < L; ++k) {
        Vec h(st + k * H, st + (k + 1) * H), c(st + (L + k) * H, st + (L + k + 1) * H);
        tf_cell(tf, "rnn/multi_rnn_cell/cell_" + std::to_string(k) + "/layer_norm_basic_lstm_cell/",
                forget_bias, in, c, h);
        std::copy(h.begin(), h.end(), st + k * H);
        std::copy(c.begin(), c.end(), st + (L + k) * H);
        in = h;
      }
      y.insert(y.end(), in.begin(), in.end());
    }
  }
  return y;
}

const CoreSpec kShapes[] = {ln_spec(5, 3, 1), ln_spec(2, 7, 2), ln_spec(4, 4, 3)};

}  // namespace

TEST_CASE("tf layer norm lstm round trip is exact and infers the spec with TF's eps") {
  Rng rng(21);
  for (const CoreSpec& spec : kShapes) {
    for (float fb : {0.0f, 1.0f}) {
      CAPTURE(spec.input);
      CAPTURE(spec.layers);
      CAPTURE(fb);
      const auto w = random_ln(spec, rng);
      const TfLayerNormLstmOptions options{.forget_bias = fb};
      const TensorMap tf = to_tf_layer_norm_lstm(w, options);
      CHECK(tf.size() == 11 * static_cast<size_t>(spec.layers));  // kernel + 5 gammas + 5 betas
      const CoreSpec inferred = infer_tf_layer_norm_lstm_spec(tf, options);
      CHECK(inferred == with_tf_eps(spec));
      CHECK(inferred.norm_epsilon == 1e-12f);
      const auto back = from_tf_layer_norm_lstm(tf, inferred, options);
      CHECK(back.spec == inferred);
      const auto h = static_cast<size_t>(spec.hidden);
      for (size_t k = 0; k < w.layers.size(); ++k) {
        const auto &a = w.layers[k], &b = back.layers[k];
        CHECK(a.weight_ih == b.weight_ih);
        CHECK(a.weight_hh == b.weight_hh);
        CHECK(a.norm_weight == b.norm_weight);
        CHECK(b.bias_ih.empty());
        CHECK(b.bias_hh.empty());
        REQUIRE(b.norm_bias.size() == a.norm_bias.size());
        for (size_t i = 0; i < a.norm_bias.size(); ++i) {
          // Moving forget_bias out of and back into a float shift rounds beta_f to the ulp of
          // the sum (as TF's own float32 addition does); every other shift is untouched.
          const bool forget = i >= h && i < 2 * h;
          if (fb == 0.0f || !forget)
            CHECK(b.norm_bias[i] == a.norm_bias[i]);
          else
            CHECK(std::abs(b.norm_bias[i] - a.norm_bias[i]) <= 0x1.0p-23f);
        }
      }
      if (fb == 0.0f) CHECK(back.layers == w.layers);
    }
  }
}

TEST_CASE("tf layer norm lstm puts every block where TF reads it") {
  Rng rng(4);
  const CoreSpec spec = ln_spec(3, 2, 2);
  const auto w = random_ln(spec, rng);
  const float fb = 0.75f;
  const TensorMap tf = to_tf_layer_norm_lstm(w, {.forget_bias = fb});
  const int h = spec.hidden;
  CHECK(tf.at(kScope0 + "kernel").shape == std::vector<int64_t>{5, 8});
  CHECK(tf.at(kScope1 + "kernel").shape == std::vector<int64_t>{4, 8});
  CHECK(tf.at(kScope1 + "state/beta").shape == std::vector<int64_t>{2});
  // TF slot s holds canonical gate {i, g, f, o}[s]; x rows first, then h rows.
  const int slot_gate[] = {0, 2, 1, 3};
  for (int k = 0; k < spec.layers; ++k) {
    const std::string scope = k == 0 ? kScope0 : kScope1;
    const LayerWeights& l = w.layers[static_cast<size_t>(k)];
    const int in = spec.layer_input(k);
    const Tensor& kernel = tf.at(scope + "kernel");
    for (int s = 0; s < 4; ++s)
      for (int j = 0; j < h; ++j) {
        const int row = slot_gate[s] * h + j, col = s * h + j;
        for (int r = 0; r < in; ++r)
          CHECK(kernel.data[static_cast<size_t>(r * 4 * h + col)] ==
                l.weight_ih[static_cast<size_t>(row * in + r)]);
        for (int r = 0; r < h; ++r)
          CHECK(kernel.data[static_cast<size_t>((in + r) * 4 * h + col)] ==
                l.weight_hh[static_cast<size_t>(row * h + r)]);
      }
    // Canonical norm rows i, f, g, o, c under TF's scopes input, forget, transform, output, state.
    const char* const group_scope[] = {"input/", "forget/", "transform/", "output/", "state/"};
    for (int q = 0; q < kNormGroups; ++q)
      for (int j = 0; j < h; ++j) {
        const auto at = static_cast<size_t>(q * h + j), u = static_cast<size_t>(j);
        CHECK(tf.at(scope + group_scope[q] + "gamma").data[u] == l.norm_weight[at]);
        CHECK(tf.at(scope + group_scope[q] + "beta").data[u] ==
              (q == 1 ? l.norm_bias[at] - fb : l.norm_bias[at]));
      }
  }

  // One cell outside a MultiRNNCell: a template without {k}.
  const auto single = random_ln(ln_spec(3, 2, 1), rng);
  const TfLayerNormLstmOptions plain{.names = "rnn/layer_norm_basic_lstm_cell/"};
  const TensorMap one = to_tf_layer_norm_lstm(single, plain);
  CHECK(one.count("rnn/layer_norm_basic_lstm_cell/kernel"));
  CHECK(one.count("rnn/layer_norm_basic_lstm_cell/transform/gamma"));
  CHECK(infer_tf_layer_norm_lstm_spec(one, plain) == with_tf_eps(single.spec));
  CHECK(contains(error_of([&] { to_tf_layer_norm_lstm(w, plain); }), "{k}"));
}

TEST_CASE("TF's layer norm lstm cell and the imported core agree over steps from non-zero state") {
  const CoreSpec shape = ln_spec(3, 4, 2);
  const int T = 6, B = 3;
  for (float fb : {1.0f, 0.0f}) {
    CAPTURE(fb);
    Rng rng(fb == 0.0f ? 31 : 32);
    const TensorMap tf = random_tf(shape, rng);
    std::vector<float> x(static_cast<size_t>(T) * B * shape.input);
    for (auto& v : x) v = static_cast<float>(rng.uniform(-1.5, 1.5));
    std::vector<float> state0(static_cast<size_t>(B) * shape.state_size());
    for (auto& v : state0) v = static_cast<float>(rng.uniform(-0.9, 0.9));  // non-zero h and c
    const std::vector<uint8_t> no_starts(static_cast<size_t>(T) * B, 0);

    Vec tf_state(state0.begin(), state0.end());
    const Vec y_tf = tf_forward(tf, shape, fb, T, B, x, tf_state);

    const TfLayerNormLstmOptions options{.forget_bias = fb};
    const CoreSpec spec = infer_tf_layer_norm_lstm_spec(tf, options);
    REQUIRE(spec == with_tf_eps(shape));
    const CanonicalWeights w = from_tf_layer_norm_lstm(tf, spec, options);

    // recur's double reference: the same function up to double rounding.
    ReferenceCore<double> ref(w);
    Vec ref_state(state0.begin(), state0.end()), y_ref(y_tf.size());
    const Vec xd(x.begin(), x.end());
    ref.forward(T, B, xd.data(), no_starts.data(), ref_state.data(), y_ref.data());
    CHECK(rel_err(y_ref, y_tf) < 1e-9);
    CHECK(rel_err(ref_state, tf_state) < 1e-9);

    // The float CPU step executor, one step at a time as the actor drives it.
    CpuStepExecutor step(spec, B);
    step.load(w);
    step.set_states(state0);
    const auto xin = static_cast<size_t>(B) * spec.input,
               hout = static_cast<size_t>(B) * spec.hidden;
    std::vector<float> y_step(y_tf.size());
    for (int t = 0; t < T; ++t)
      step.step(std::span(x).subspan(t * xin, xin),
                std::span(no_starts).subspan(static_cast<size_t>(t) * B, B),
                std::span(y_step).subspan(t * hout, hout));
    std::vector<float> step_state(state0.size());
    step.get_states(step_state);
    CHECK(rel_err(Vec(y_step.begin(), y_step.end()), y_tf) < 1e-5);
    CHECK(rel_err(Vec(step_state.begin(), step_state.end()), tf_state) < 1e-5);

    // The check has teeth: TF's j and f slots swapped (a wrong slot order) is far off.
    TensorMap swapped = tf;
    for (const std::string& scope : {kScope0, kScope1})
      swap_blocks(swapped.at(scope + "kernel"), 1, 2, spec.hidden);
    ReferenceCore<double> wrong(from_tf_layer_norm_lstm(swapped, spec, options));
    Vec wrong_state(state0.begin(), state0.end()), y_wrong(y_tf.size());
    wrong.forward(T, B, xd.data(), no_starts.data(), wrong_state.data(), y_wrong.data());
    CHECK(rel_err(y_wrong, y_tf) > 1e-2);
  }
}

TEST_CASE("tf layer norm lstm errors name the tensor, the layer_norm=False cell and the cell") {
  Rng rng(9);
  const CoreSpec spec = ln_spec(3, 2, 2);
  const TensorMap good = to_tf_layer_norm_lstm(random_ln(spec, rng));
  const CoreSpec inferred = infer_tf_layer_norm_lstm_spec(good);

  TensorMap tf = good;
  tf.erase(kScope1 + "state/gamma");
  const std::string missing = error_of([&] { from_tf_layer_norm_lstm(tf, inferred); });
  CHECK(contains(missing, "'" + kScope1 + "state/gamma' is missing"));
  CHECK(contains(missing, "TF LayerNormBasicLSTMCell layer 1"));

  tf = good;
  tf[kScope1 + "kernel"] = Tensor::zeros({8, 4});
  CHECK(contains(error_of([&] { from_tf_layer_norm_lstm(tf, inferred); }),
                 "'" + kScope1 + "kernel' has shape [8, 4], expected [4, 8]"));
  tf = good;
  tf[kScope0 + "kernel"] = Tensor::zeros({5, 6});
  CHECK(contains(error_of([&] { infer_tf_layer_norm_lstm_spec(tf); }),
                 "'" + kScope0 + "kernel' has shape [5, 6], expected [input + 2, 8]"));
  tf = good;
  tf[kScope0 + "forget/beta"] = Tensor::zeros({3});
  CHECK(contains(error_of([&] { from_tf_layer_norm_lstm(tf, inferred); }),
                 "'" + kScope0 + "forget/beta' has shape [3], expected [2]"));

  // A layer_norm=False cell: kernel and one bias, no gammas or betas.
  TensorMap plain;
  plain[kScope0 + "kernel"] = Tensor::zeros({5, 8});
  plain[kScope0 + "bias"] = Tensor::zeros({8});
  const std::string no_norm = error_of([&] { infer_tf_layer_norm_lstm_spec(plain); });
  CHECK(contains(no_norm, "'" + kScope0 + "bias' is present"));
  CHECK(contains(no_norm, "layer_norm=False"));
  CHECK(contains(no_norm, "--from tf-lstm-block"));
  tf = good;
  tf[kScope1 + "bias"] = Tensor::zeros({8});
  CHECK(contains(error_of([&] { from_tf_layer_norm_lstm(tf, inferred); }), "layer_norm=False"));

  CHECK(contains(error_of([&] { infer_tf_layer_norm_lstm_spec(TensorMap{}); }),
                 "'" + kScope0 + "input/gamma' is missing"));

  // Other cells are refused both ways, with the layout that holds them.
  CoreSpec lstm = spec;
  lstm.cell = CellType::kLstm;
  const auto lstm_weights = CanonicalWeights::random(lstm, rng);
  const std::string refused = error_of([&] { to_tf_layer_norm_lstm(lstm_weights); });
  CHECK(contains(refused, "lstm_ln cores only, this core is lstm"));
  CHECK(contains(refused, "tf-lstm-block"));
  CHECK(contains(error_of([&] { from_tf_layer_norm_lstm(good, lstm); }),
                 "lstm_ln cores only, this core is lstm"));
  CoreSpec gru = spec;
  gru.cell = CellType::kGru;
  CHECK(contains(error_of([&] { to_tf_layer_norm_lstm(CanonicalWeights::random(gru, rng)); }),
                 "this core is gru; use the keras layout"));
}
