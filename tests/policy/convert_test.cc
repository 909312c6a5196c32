// The layout converters (policy/convert/): round trips canonical -> foreign -> canonical, and a
// numeric proof of the gate mapping: each foreign layout is run by its own framework's step
// equations (written here from TF's and Keras' kernels, in double) and must match the canonical
// cuDNN step of core_spec.h over several steps from non-zero state. At t = 0 with zero state a
// swapped f/g gate or an untransposed recurrent matrix is invisible, hence both.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "policy/canonical_weights.h"
#include "policy/convert/core_metadata.h"
#include "policy/convert/keras.h"
#include "policy/convert/tf_lstm_block.h"
#include "tests/support/swap_blocks.h"

using namespace recur::policy;
using namespace recur::policy::convert;
using recur::Rng;
using recur::test::swap_blocks;

namespace {

using Vec = std::vector<double>;

CoreSpec make_spec(CellType cell, int input, int hidden, int layers) {
  CoreSpec spec;
  spec.cell = cell;
  spec.input = input;
  spec.hidden = hidden;
  spec.layers = layers;
  return spec;
}

// Values on a 2^-10 grid: every float sum and forget-bias shift the converters form is then
// exact, so the foreign and canonical forwards differ only by double rounding (~1e-16).
float on_grid(double v) {
  return static_cast<float>(std::round(v * 1024.0) / 1024.0);
}

CanonicalWeights grid_weights(const CoreSpec& spec, uint64_t seed) {
  Rng rng(seed);
  CanonicalWeights w = CanonicalWeights::zeros(spec);
  for (auto& l : w.layers)
    for (auto* v : {&l.weight_ih, &l.weight_hh, &l.bias_ih, &l.bias_hh})
      for (auto& x : *v) x = on_grid(rng.uniform(-0.8, 0.8));
  return w;
}

// Every value ~ U(-1, 1), the forget-gate biases included (CanonicalWeights::random pins them).
CanonicalWeights random_weights(const CoreSpec& spec, Rng& rng) {
  CanonicalWeights w = CanonicalWeights::zeros(spec);
  for (auto& l : w.layers)
    for (auto* v : {&l.weight_ih, &l.weight_hh, &l.bias_ih, &l.bias_hh})
      for (auto& x : *v) x = static_cast<float>(rng.uniform(-1.0, 1.0));
  return w;
}

// Overwrites every value of every tensor with grid values: an arbitrary foreign file.
void randomize(TensorMap& tensors, uint64_t seed) {
  Rng rng(seed);
  for (auto& [name, t] : tensors)
    for (auto& x : t.data) x = on_grid(rng.uniform(-0.8, 0.8));
}

double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

// y (cols) = x (rows) · m (rows, cols) row-major, starting at row `row0` of m.
void add_xm(const Vec& x, const std::vector<float>& m, int cols, int row0, Vec& y) {
  for (size_t r = 0; r < x.size(); ++r)
    for (int c = 0; c < cols; ++c)
      y[static_cast<size_t>(c)] += x[r] * m[(row0 + r) * static_cast<size_t>(cols) + c];
}
// y (rows) += m (rows, cols) · x (cols), as canonical (G*H, in) matrices act.
void add_mx(const std::vector<float>& m, const Vec& x, Vec& y) {
  for (size_t r = 0; r < y.size(); ++r)
    for (size_t c = 0; c < x.size(); ++c) y[r] += m[r * x.size() + c] * x[c];
}
void add_b(const std::vector<float>& b, size_t offset, Vec& y) {
  for (size_t i = 0; i < y.size(); ++i) y[i] += b[offset + i];
}

// One layer's state and step: x in, (h, c) updated in place.
struct LayerState {
  Vec h, c;
};
using LayerStep = std::function<void(int k, const Vec& x, LayerState& s)>;

// The canonical step, from the equations in core_spec.h (cuDNN's, gates i,f,g,o / r,z,n).
LayerStep canonical_step(const CanonicalWeights& w) {
  return [&w](int k, const Vec& x, LayerState& s) {
    const auto& l = w.layers[static_cast<size_t>(k)];
    const size_t h = s.h.size();
    Vec a(w.spec.gates() * h, 0.0), r(w.spec.gates() * h, 0.0);  // W x + b_W, R h + b_R
    add_mx(l.weight_ih, x, a);
    add_b(l.bias_ih, 0, a);
    add_mx(l.weight_hh, s.h, r);
    add_b(l.bias_hh, 0, r);
    for (size_t j = 0; j < h; ++j) {
      if (w.spec.cell == CellType::kLstm) {
        const double i = sigmoid(a[j] + r[j]), f = sigmoid(a[h + j] + r[h + j]);
        const double g = std::tanh(a[2 * h + j] + r[2 * h + j]);
        const double o = sigmoid(a[3 * h + j] + r[3 * h + j]);
        s.c[j] = f * s.c[j] + i * g;
        s.h[j] = o * std::tanh(s.c[j]);
      } else {
        const double rg = sigmoid(a[j] + r[j]), z = sigmoid(a[h + j] + r[h + j]);
        const double n = std::tanh(a[2 * h + j] + rg * r[2 * h + j]);
        s.h[j] = (1 - z) * n + z * s.h[j];
      }
    }
  };
}

// TF LSTMBlockCell (lstm_ops.h, ICFO): gates = [x, h]·kernel + bias; i, c, f, o; f += forget_bias.
LayerStep tf_block_step(const TensorMap& t, const std::string& names, double forget_bias) {
  return [&t, names, forget_bias](int k, const Vec& x, LayerState& s) {
    const std::string scope = [&] {
      std::string n = names;
      n.replace(n.find("{k}"), 3, std::to_string(k));
      return n;
    }();
    const auto& kernel = t.at(scope + "kernel").data;
    const size_t h = s.h.size();
    Vec z(4 * h, 0.0);
    add_xm(x, kernel, static_cast<int>(4 * h), 0, z);
    add_xm(s.h, kernel, static_cast<int>(4 * h), static_cast<int>(x.size()), z);
    add_b(t.at(scope + "bias").data, 0, z);
    for (size_t j = 0; j < h; ++j) {
      const double i = z[j], ci = z[h + j], f = z[2 * h + j] + forget_bias, o = z[3 * h + j];
      s.c[j] = sigmoid(f) * s.c[j] + sigmoid(i) * std::tanh(ci);
      s.h[j] = sigmoid(o) * std::tanh(s.c[j]);
    }
  };
}

std::string keras_scope(CellType cell, int k) {
  const std::string base = cell == CellType::kLstm ? "lstm" : "gru";
  return (k == 0 ? base : base + "_" + std::to_string(k)) + "/" + base + "_cell/";
}

// Keras LSTMCell.call (implementation 2): z = x·kernel + h·recurrent_kernel + bias; i, f, c, o.
// Keras GRUCell.call, reset_after=True: x·kernel + bias[0] and h·recurrent_kernel + bias[1],
// split z, r, h; hh = tanh(x_h + r * rec_h); h' = z * h + (1 - z) * hh.
LayerStep keras_step(const TensorMap& t, CellType cell) {
  return [&t, cell](int k, const Vec& x, LayerState& s) {
    const std::string scope = keras_scope(cell, k);
    const auto& kernel = t.at(scope + "kernel").data;
    const auto& recurrent = t.at(scope + "recurrent_kernel").data;
    const auto& bias = t.at(scope + "bias").data;
    const size_t h = s.h.size();
    if (cell == CellType::kLstm) {
      Vec z(4 * h, 0.0);
      add_xm(x, kernel, static_cast<int>(4 * h), 0, z);
      add_xm(s.h, recurrent, static_cast<int>(4 * h), 0, z);
      add_b(bias, 0, z);
      for (size_t j = 0; j < h; ++j) {
        s.c[j] = sigmoid(z[h + j]) * s.c[j] + sigmoid(z[j]) * std::tanh(z[2 * h + j]);
        s.h[j] = sigmoid(z[3 * h + j]) * std::tanh(s.c[j]);
      }
      return;
    }
    Vec mx(3 * h, 0.0), mh(3 * h, 0.0);
    add_xm(x, kernel, static_cast<int>(3 * h), 0, mx);
    add_b(bias, 0, mx);
    add_xm(s.h, recurrent, static_cast<int>(3 * h), 0, mh);
    add_b(bias, 3 * h, mh);
    for (size_t j = 0; j < h; ++j) {
      const double z = sigmoid(mx[j] + mh[j]), r = sigmoid(mx[h + j] + mh[h + j]);
      const double hh = std::tanh(mx[2 * h + j] + r * mh[2 * h + j]);
      s.h[j] = z * s.h[j] + (1 - z) * hh;
    }
  };
}

// Runs `steps` steps of a stacked core from random non-zero (h0, c0) on random inputs (the same
// for equal seeds); returns every layer's h and c after every step, concatenated.
Vec run(const CoreSpec& spec, const LayerStep& step, int steps, uint64_t seed) {
  Rng rng(seed);
  std::vector<LayerState> state(static_cast<size_t>(spec.layers));
  for (auto& s : state) {
    s.h.resize(static_cast<size_t>(spec.hidden));
    s.c.resize(static_cast<size_t>(spec.hidden));
    for (auto& v : s.h) v = rng.uniform(-0.9, 0.9);
    for (auto& v : s.c) v = rng.uniform(-2.0, 2.0);
  }
  Vec trace;
  for (int t = 0; t < steps; ++t) {
    Vec x(static_cast<size_t>(spec.input));
    for (auto& v : x) v = rng.uniform(-1.5, 1.5);
    for (int k = 0; k < spec.layers; ++k) {
      auto& s = state[static_cast<size_t>(k)];
      step(k, x, s);
      x = s.h;
      trace.insert(trace.end(), s.h.begin(), s.h.end());
      if (spec.cell == CellType::kLstm) trace.insert(trace.end(), s.c.begin(), s.c.end());
    }
  }
  return trace;
}

double max_abs_diff(const Vec& a, const Vec& b) {
  REQUIRE(a.size() == b.size());
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const recur::Error& e) {
    return e.what();
  }
  return "(no recur::Error)";
}

constexpr int kSteps = 5;
// Both forwards are double over the same float values; they differ only in summation order.
constexpr double kTolerance = 1e-12;

const CoreSpec kShapes[] = {
    make_spec(CellType::kLstm, 5, 3, 1),
    make_spec(CellType::kLstm, 2, 7, 2),
    make_spec(CellType::kLstm, 4, 4, 3),
};

}  // namespace

TEST_CASE("tf lstm block round trip keeps weights bit exact and bias sums exact") {
  Rng rng(11);
  for (CoreSpec spec : kShapes) {
    for (float fb : {0.0f, 1.0f}) {
      CAPTURE(spec.input);
      CAPTURE(spec.layers);
      CAPTURE(fb);
      const auto w = random_weights(spec, rng);
      const TfLstmBlockOptions options{.forget_bias = fb};
      const TensorMap tf = to_tf_lstm_block(w, options);
      CHECK(tf.size() == 2 * static_cast<size_t>(spec.layers));
      CHECK(infer_tf_lstm_block_spec(tf, options) == spec);
      const auto back = from_tf_lstm_block(tf, spec, options);
      const auto h = static_cast<size_t>(spec.hidden);
      for (size_t k = 0; k < w.layers.size(); ++k) {
        const auto &a = w.layers[k], &b = back.layers[k];
        CHECK(a.weight_ih == b.weight_ih);
        CHECK(a.weight_hh == b.weight_hh);
        CHECK(b.bias_ih == b.bias_hh);  // the documented even split
        for (size_t i = 0; i < a.bias_ih.size(); ++i) {
          const float sum = a.bias_ih[i] + a.bias_hh[i], sum_back = b.bias_ih[i] + b.bias_hh[i];
          // Folding forget_bias in and out of a float32 file rounds the f bias to the ulp of
          // 1 (TF's own runtime addition rounds the same way); every other sum is untouched.
          const bool forget = i >= h && i < 2 * h;
          if (fb == 0.0f || !forget)
            CHECK(sum_back == sum);
          else
            CHECK(std::abs(sum_back - sum) <= 0x1.0p-23f);
        }
      }
    }
  }
}

TEST_CASE("tf lstm block names follow MultiRNNCell and the template") {
  Rng rng(3);
  const auto w = CanonicalWeights::random(make_spec(CellType::kLstm, 3, 2, 3), rng);
  const TensorMap tf = to_tf_lstm_block(w);
  CHECK(tf.count("rnn/multi_rnn_cell/cell_0/lstm_cell/kernel"));
  CHECK(tf.count("rnn/multi_rnn_cell/cell_2/lstm_cell/bias"));
  CHECK(tf.at("rnn/multi_rnn_cell/cell_0/lstm_cell/kernel").shape == std::vector<int64_t>{5, 8});
  CHECK(tf.at("rnn/multi_rnn_cell/cell_1/lstm_cell/kernel").shape == std::vector<int64_t>{4, 8});

  const auto single = CanonicalWeights::random(make_spec(CellType::kLstm, 3, 2, 1), rng);
  const TfLstmBlockOptions plain{.names = "rnn/lstm_cell/"};
  const TensorMap one = to_tf_lstm_block(single, plain);
  CHECK(one.count("rnn/lstm_cell/kernel"));
  CHECK(infer_tf_lstm_block_spec(one, plain) == single.spec);
  CHECK(error_of([&] { to_tf_lstm_block(w, plain); }).find("{k}") != std::string::npos);
}

TEST_CASE("tf lstm block rejects other cells and wrong shapes with names") {
  Rng rng(5);
  const auto gru = CanonicalWeights::random(make_spec(CellType::kGru, 3, 2, 1), rng);
  CHECK(error_of([&] { to_tf_lstm_block(gru); }).find("LSTM cores only, this core is gru") !=
        std::string::npos);

  const CoreSpec spec = make_spec(CellType::kLstm, 3, 2, 2);
  const TensorMap good = to_tf_lstm_block(CanonicalWeights::random(spec, rng));
  TensorMap tf = good;
  tf["rnn/multi_rnn_cell/cell_1/lstm_cell/kernel"] = Tensor::zeros({8, 4});
  const std::string msg = error_of([&] { from_tf_lstm_block(tf, spec); });
  CHECK(
      msg.find("'rnn/multi_rnn_cell/cell_1/lstm_cell/kernel' has shape [8, 4], expected [4, 8]") !=
      std::string::npos);
  tf = good;
  tf.erase("rnn/multi_rnn_cell/cell_1/lstm_cell/bias");
  CHECK(error_of([&] {
          from_tf_lstm_block(tf, spec);
        }).find("'rnn/multi_rnn_cell/cell_1/lstm_cell/bias' is missing") != std::string::npos);
  CHECK(error_of([&] { infer_tf_lstm_block_spec(TensorMap{}); }).find("is missing") !=
        std::string::npos);
}

TEST_CASE("keras lstm round trip keeps weights bit exact and bias sums exact") {
  Rng rng(13);
  for (CoreSpec spec : kShapes) {
    CAPTURE(spec.layers);
    const auto w = random_weights(spec, rng);
    const TensorMap keras = to_keras(w);
    CHECK(keras.size() == 3 * static_cast<size_t>(spec.layers));
    CHECK(infer_keras_spec(keras) == spec);
    const auto back = from_keras(keras, spec);
    for (size_t k = 0; k < w.layers.size(); ++k) {
      const auto &a = w.layers[k], &b = back.layers[k];
      CHECK(a.weight_ih == b.weight_ih);
      CHECK(a.weight_hh == b.weight_hh);
      for (size_t i = 0; i < a.bias_ih.size(); ++i)
        CHECK(b.bias_ih[i] + b.bias_hh[i] == a.bias_ih[i] + a.bias_hh[i]);
    }
    CHECK(to_keras(back) == keras);
  }
}

TEST_CASE("keras gru round trip is bit exact") {
  Rng rng(17);
  for (CoreSpec spec : kShapes) {
    spec.cell = CellType::kGru;
    CAPTURE(spec.layers);
    const auto w = CanonicalWeights::random(spec, rng);
    const TensorMap keras = to_keras(w);
    CHECK(infer_keras_spec(keras) == spec);
    CHECK(from_keras(keras, spec) == w);
    const std::string s = spec.layers > 1 ? "gru_1/gru_cell/" : "gru/gru_cell/";
    CHECK(keras.at(s + "bias").shape == std::vector<int64_t>{2, 3 * spec.hidden});
  }
}

TEST_CASE("keras names follow the auto naming and the template") {
  Rng rng(19);
  const auto w = CanonicalWeights::random(make_spec(CellType::kLstm, 3, 2, 3), rng);
  const TensorMap keras = to_keras(w);
  for (const char* name :
       {"lstm/lstm_cell/kernel", "lstm_1/lstm_cell/recurrent_kernel", "lstm_2/lstm_cell/bias"})
    CHECK(keras.count(name));
  const KerasOptions h5{.names = "model_weights/{layer}/{layer}/{cell}/"};
  const TensorMap nested = to_keras(w, h5);
  CHECK(nested.count("model_weights/lstm_2/lstm_2/lstm_cell/kernel"));
  CHECK(infer_keras_spec(nested, h5) == w.spec);
  CHECK(from_keras(nested, w.spec, h5) == from_keras(keras, w.spec));
}

TEST_CASE("keras rejects rnn cores and gru without reset_after and wrong shapes") {
  Rng rng(23);
  const auto rnn = CanonicalWeights::random(make_spec(CellType::kRnnTanh, 3, 2, 1), rng);
  CHECK(error_of([&] { to_keras(rnn); }).find("LSTM and GRU cores only") != std::string::npos);

  const CoreSpec spec = make_spec(CellType::kGru, 3, 2, 1);
  TensorMap keras = to_keras(CanonicalWeights::random(spec, rng));
  keras["gru/gru_cell/bias"] = Tensor::zeros({6});
  CHECK(error_of([&] { infer_keras_spec(keras); }).find("reset_after=False") != std::string::npos);
  CHECK(error_of([&] {
          from_keras(keras, spec);
        }).find("'gru/gru_cell/bias' has shape [6], expected [2, 6]") != std::string::npos);
  keras["gru/gru_cell/recurrent_kernel"] = Tensor::zeros({6, 2});
  CHECK(error_of([&] { infer_keras_spec(keras); }).find("expected [hidden, 4*hidden]") !=
        std::string::npos);
  CHECK(error_of([&] { infer_keras_spec(TensorMap{}); }).find("no Keras LSTM or GRU") !=
        std::string::npos);
}

TEST_CASE("tf lstm block cell steps match the canonical step from non-zero state") {
  const CoreSpec spec = make_spec(CellType::kLstm, 3, 4, 2);
  const std::string names = TfLstmBlockOptions{}.names;
  for (double fb : {1.0, 0.5, 0.0}) {
    CAPTURE(fb);
    const TfLstmBlockOptions options{.forget_bias = static_cast<float>(fb)};
    // Export: canonical weights run by the TF cell equations.
    const auto w = grid_weights(spec, 29);
    const TensorMap tf = to_tf_lstm_block(w, options);
    const Vec want = run(spec, canonical_step(w), kSteps, 31);
    CHECK(max_abs_diff(run(spec, tf_block_step(tf, names, fb), kSteps, 31), want) <= kTolerance);

    // Import: an arbitrary TF file run by recur's equations.
    TensorMap file = tf;
    randomize(file, 37);
    const auto imported = from_tf_lstm_block(file, spec, options);
    CHECK(max_abs_diff(run(spec, canonical_step(imported), kSteps, 41),
                       run(spec, tf_block_step(file, names, fb), kSteps, 41)) <= kTolerance);

    // The check can fail: swapping c and f (slots 1, 2) or dropping forget_bias shows up.
    TensorMap swapped = tf;
    swap_blocks(swapped.at("rnn/multi_rnn_cell/cell_1/lstm_cell/kernel"), 1, 2, spec.hidden);
    CHECK(max_abs_diff(run(spec, tf_block_step(swapped, names, fb), kSteps, 31), want) > 1e-3);
    if (fb != 0.0)
      CHECK(max_abs_diff(run(spec, tf_block_step(tf, names, 0.0), kSteps, 31), want) > 1e-3);
  }
}

TEST_CASE("keras lstm and gru steps match the canonical step from non-zero state") {
  for (CellType cell : {CellType::kLstm, CellType::kGru}) {
    CAPTURE(to_string(cell));
    const CoreSpec spec = make_spec(cell, 3, 4, 2);
    const auto w = grid_weights(spec, 43);
    const TensorMap keras = to_keras(w);
    const Vec want = run(spec, canonical_step(w), kSteps, 47);
    CHECK(max_abs_diff(run(spec, keras_step(keras, cell), kSteps, 47), want) <= kTolerance);

    TensorMap file = keras;
    randomize(file, 53);
    const auto imported = from_keras(file, spec);
    CHECK(max_abs_diff(run(spec, canonical_step(imported), kSteps, 59),
                       run(spec, keras_step(file, cell), kSteps, 59)) <= kTolerance);

    // Swapping the first two gate blocks (f/i for LSTM, z/r for GRU) in the recurrent kernel
    // of layer 1 must show up.
    TensorMap swapped = keras;
    swap_blocks(swapped.at(keras_scope(cell, 1) + "recurrent_kernel"), 0, 1, spec.hidden);
    CHECK(max_abs_diff(run(spec, keras_step(swapped, cell), kSteps, 47), want) > 1e-3);
  }
}

TEST_CASE("core spec comes from checkpoint metadata or from the canonical shapes") {
  Rng rng(61);
  CoreSpec spec = make_spec(CellType::kLstm, 5, 3, 2);
  spec.cell_clip = 2.5f;
  Checkpoint ckpt;
  ckpt.tensors = CanonicalWeights::random(spec, rng).to_tensors("core.");
  write_core_metadata(spec, ckpt);
  CHECK(ckpt.metadata.at("core.cell") == "lstm");
  CHECK(ckpt.metadata.at("core.hidden") == "3");
  CHECK(read_core_spec(ckpt) == spec);

  // Without metadata the shapes give all but cell_clip.
  Checkpoint bare{ckpt.tensors, {}};
  spec.cell_clip = 0;
  CHECK(read_core_spec(bare) == spec);
  const CoreSpec gru = make_spec(CellType::kGru, 2, 4, 3);
  Checkpoint other{CanonicalWeights::random(gru, rng).to_tensors("net.rnn."), {}};
  CHECK(read_core_spec(other, "net.rnn.") == gru);

  ckpt.metadata["core.layers"] = "two";
  CHECK(error_of([&] { read_core_spec(ckpt); }).find("'core.layers' is 'two', not a number") !=
        std::string::npos);
  ckpt.metadata.erase("core.layers");
  CHECK(error_of([&] { read_core_spec(ckpt); }).find("no 'core.layers'") != std::string::npos);
  const CoreSpec rnn = make_spec(CellType::kRnnTanh, 2, 4, 1);
  Checkpoint plain_rnn{CanonicalWeights::random(rnn, rng).to_tensors("core."), {}};
  CHECK(error_of([&] { read_core_spec(plain_rnn); }).find("needs the metadata key 'core.cell'") !=
        std::string::npos);
}
