// The CPU executors against the double-precision reference and finite differences, for every
// cell type, 1-3 layers, non-zero initial states, T >= 5 and resets at random steps (a wrong
// forget gate or recurrent matrix is invisible at t = 0 with a zero state).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "policy/cpu/cpu_sequence_executor.h"
#include "policy/cpu/cpu_step_executor.h"
#include "policy/device_choice.h"
#include "policy/devices.h"
#include "policy/reference_core.h"
#include "tests/support/alloc_counter.h"
#include "tests/support/rel_err.h"
#include "tests/support/skip.h"

using namespace recur::policy;

namespace {

struct Problem {
  CoreSpec spec;
  int T = 7, B = 5;
  CanonicalWeights w;
  std::vector<float> x, state0;
  std::vector<uint8_t> starts;
};

// Weights ~ U(-0.6, 0.6): large enough that every gate is in its non-linear range.
Problem make_problem(CellType cell, int layers, float clip = 0, uint64_t seed = 1, int T = 7,
                     int B = 5, int hidden = 4) {
  Problem p;
  p.spec = {cell, 3, hidden, layers, clip};
  p.T = T;
  p.B = B;
  recur::Rng rng(seed);
  p.w = CanonicalWeights::zeros(p.spec);
  for (auto& l : p.w.layers)
    for (auto* v : {&l.weight_ih, &l.weight_hh, &l.bias_ih, &l.bias_hh})
      for (auto& e : *v) e = static_cast<float>(rng.uniform(-0.6, 0.6));
  // lstm_ln's LayerNorm gains and shifts, away from their 1 / 0 init so that a swapped row shows
  // (drawn after the matrices, so the other cells' problems are unchanged).
  for (auto& l : p.w.layers) {
    for (auto& e : l.norm_weight) e = static_cast<float>(rng.uniform(0.5, 1.5));
    for (auto& e : l.norm_bias) e = static_cast<float>(rng.uniform(-0.5, 0.5));
  }
  p.x.resize(static_cast<size_t>(T) * B * p.spec.input);
  for (auto& e : p.x) e = static_cast<float>(rng.uniform(-1.5, 1.5));
  p.state0.resize(static_cast<size_t>(B) * p.spec.state_size());
  for (auto& e : p.state0) e = static_cast<float>(rng.uniform(-0.9, 0.9));  // non-zero
  p.starts.assign(static_cast<size_t>(T) * B, 0);
  for (int t = 0; t < T; ++t)
    for (int b = 0; b < B; ++b)
      p.starts[static_cast<size_t>(t) * B + b] = rng.uniform() < 0.2 ? 1 : 0;
  p.starts[1] = 1;  // slot 1 restarts at t = 0: its initial state must not matter
  return p;
}

using recur::test::rel_err;
std::vector<double> to_d(const std::vector<float>& v) {
  return {v.begin(), v.end()};
}

// The double reference's outputs (T, B, H) and final state.
void reference(const Problem& p, std::vector<double>& y, std::vector<double>& state) {
  ReferenceCore<double> ref(p.w);
  state = to_d(p.state0);
  const auto xd = to_d(p.x);
  y.assign(static_cast<size_t>(p.T) * p.B * p.spec.hidden, 0.0);
  ref.forward(p.T, p.B, xd.data(), p.starts.data(), state.data(), y.data());
}

const CellType kCells[] = {CellType::kLstm,         CellType::kGru,    CellType::kRnnTanh,
                           CellType::kRnnRelu,      CellType::kMinGru, CellType::kLstmLn,
                           CellType::kMinGruHighway};

// device.learner: cuda builds the core's GPU sequence executor where a GPU is usable, and fails
// clearly where none is (a CPU-only build: recur::Error; no device: the CUDA error).
void check_gpu_learner_builds(const CoreSpec& spec) {
  Placement cuda;
  cuda.device = Device::kCuda;
  if (query_devices().cuda_usable()) {
    CHECK(make_sequence_executor(spec, cuda) != nullptr);
  } else {
    CHECK_THROWS(make_sequence_executor(spec, cuda));
  }
}

// lstm_ln runs at H 4 and H 21 as well: its LayerNorm sums go through vector lanes of 16 floats
// (8 doubles) and a scalar tail (policy::lane_sum), and H 4 has the tail alone.
std::vector<int> hidden_sizes(CellType cell) {
  if (cell == CellType::kLstmLn) return {4, 21};
  return {4};
}

}  // namespace

TEST_CASE("step executor and sequence executor equal the double reference") {
  // B 2 takes the sequence engine's per-row products, B 5 its GEMMs.
  for (int B : {2, 5})
    for (CellType cell : kCells) {
      for (int hidden : hidden_sizes(cell))
        for (int layers = 1; layers <= 3; ++layers) {
          for (float clip : {0.0f, 0.5f}) {
            if (clip > 0 && cell != CellType::kLstm) continue;
            CAPTURE(B);
            CAPTURE(to_string(cell));
            CAPTURE(hidden);
            CAPTURE(layers);
            CAPTURE(clip);
            const Problem p = make_problem(cell, layers, clip, 10 + layers, 7, B, hidden);
            std::vector<double> y_ref, s_ref;
            reference(p, y_ref, s_ref);

            CpuSequenceExecutor seq(p.spec);
            seq.load(p.w);
            std::vector<float> y_seq(y_ref.size()), s_seq(p.state0.size());
            seq.forward(p.T, p.B, p.x, p.starts, p.state0, y_seq, s_seq);
            CHECK(rel_err(to_d(y_seq), y_ref) < 1e-6);
            CHECK(rel_err(to_d(s_seq), s_ref) < 1e-6);

            CpuStepExecutor step(p.spec, p.B);
            step.load(p.w);
            step.set_states(p.state0);
            std::vector<float> y_step(y_ref.size());
            const size_t xin = static_cast<size_t>(p.B) * p.spec.input;
            const size_t hout = static_cast<size_t>(p.B) * p.spec.hidden;
            for (int t = 0; t < p.T; ++t)
              step.step(std::span(p.x).subspan(t * xin, xin),
                        std::span(p.starts).subspan(static_cast<size_t>(t) * p.B, p.B),
                        std::span(y_step).subspan(t * hout, hout));
            CHECK(rel_err(to_d(y_step), y_ref) < 1e-6);
            // Step loop == sequence forward (both float32).
            CHECK(rel_err(to_d(y_step), to_d(y_seq)) < 1e-6);
            std::vector<float> s_step(p.state0.size());
            step.get_states(s_step);
            CHECK(rel_err(to_d(s_step), to_d(s_seq)) < 1e-6);
          }
        }
    }
}

TEST_CASE("a sequence with resets equals the same data cut into separate sequences") {
  for (CellType cell : kCells) {
    CAPTURE(to_string(cell));
    const Problem p = make_problem(cell, 2, 0, 77, 9, 3);
    CpuSequenceExecutor seq(p.spec);
    seq.load(p.w);
    std::vector<float> y(static_cast<size_t>(p.T) * p.B * p.spec.hidden);
    seq.forward(p.T, p.B, p.x, p.starts, p.state0, y);
    const int H = p.spec.hidden, in = p.spec.input, S = p.spec.state_size();
    for (int b = 0; b < p.B; ++b) {
      int t0 = 0;
      while (t0 < p.T) {
        int t1 = t0 + 1;
        while (t1 < p.T && !p.starts[static_cast<size_t>(t1) * p.B + b]) ++t1;
        // Segment [t0, t1) of slot b as its own B = 1 sequence, with no flags inside.
        const bool fresh = p.starts[static_cast<size_t>(t0) * p.B + b] != 0;
        std::vector<float> init(static_cast<size_t>(S), 0.0f);
        if (!fresh) std::copy_n(p.state0.begin() + b * S, S, init.begin());
        std::vector<float> xs;
        for (int t = t0; t < t1; ++t)
          xs.insert(xs.end(), p.x.begin() + (t * p.B + b) * in,
                    p.x.begin() + (t * p.B + b + 1) * in);
        std::vector<uint8_t> none(static_cast<size_t>(t1 - t0), 0);
        std::vector<float> ys(static_cast<size_t>(t1 - t0) * H);
        CpuSequenceExecutor one(p.spec);
        one.load(p.w);
        one.forward(t1 - t0, 1, xs, none, init, ys);
        for (int t = t0; t < t1; ++t)
          for (int j = 0; j < H; ++j)
            CHECK(y[(static_cast<size_t>(t) * p.B + b) * H + j] ==
                  doctest::Approx(ys[static_cast<size_t>(t - t0) * H + j]).epsilon(1e-6));
        t0 = t1;
      }
    }
  }
}

TEST_CASE("BPTT gradients equal central finite differences in double precision") {
  // B 2 takes the engine's per-row products (a matrix-vector product per row), B 3 its GEMMs.
  for (int B : {2, 3})
    for (CellType cell : kCells) {
      for (int hidden : hidden_sizes(cell))
        for (int layers : {1, 2}) {
          for (float clip : {0.0f, 0.3f}) {
            if (clip > 0 && cell != CellType::kLstm) continue;
            CAPTURE(B);
            CAPTURE(to_string(cell));
            CAPTURE(hidden);
            CAPTURE(layers);
            const Problem p = make_problem(cell, layers, clip, 40 + layers, 6, B, hidden);
            SequenceEngine<double> eng(p.spec);
            // lstm_ln's backward recomputes its activations from the normalized values at large
            // sizes (kRecomputeActivationsBytes): at B 3 here it does, at B 2 it reads the stored
            // ones, and the float executor below (the stored ones) is checked against both.
            if (B == 3) eng.set_recompute_activations_bytes(0);
            canonical_to_engine(p.w, eng, eng.params());
            auto x = to_d(p.x);  // perturbed in place by the finite differences below
            auto s0 = to_d(p.state0);
            const size_t ny = static_cast<size_t>(p.T) * p.B * p.spec.hidden;
            recur::Rng rng(5);
            std::vector<double> dy(ny);
            for (auto& v : dy) v = rng.uniform(-1, 1);
            // Loss = sum(dy * y): its gradient is what backward computes from dy.
            auto loss = [&](const std::vector<double>& xx, const std::vector<double>& ss) {
              std::vector<double> y(ny);
              eng.forward(p.T, p.B, xx.data(), p.starts.data(), ss.data(), y.data(), nullptr);
              double l = 0;
              for (size_t i = 0; i < ny; ++i) l += dy[i] * y[i];
              return l;
            };
            std::vector<double> y(ny), dx(x.size()), ds(s0.size());
            eng.forward(p.T, p.B, x.data(), p.starts.data(), s0.data(), y.data(), nullptr);
            std::fill(eng.grads().begin(), eng.grads().end(), 0.0);
            eng.backward(dy.data(), dx.data(), ds.data());
            const std::vector<double> grads(eng.grads().begin(), eng.grads().end());

            // Central differences, eps 1e-6: truncation error ~1e-12 and rounding ~1e-10 relative
            // to the loss, far below the 1e-6 tolerance; a wrong term gives errors of order 1.
            const double eps = 1e-6;
            // The loss's central difference in each entry of v (the weights, x or s0), perturbed in
            // place and restored.
            auto central_differences = [&](auto& v) {
              std::vector<double> fd(v.size());
              for (size_t i = 0; i < v.size(); ++i) {
                const double keep = v[i];
                v[i] = keep + eps;
                const double lp = loss(x, s0);
                v[i] = keep - eps;
                const double lm = loss(x, s0);
                v[i] = keep;
                fd[i] = (lp - lm) / (2 * eps);
              }
              return fd;
            };
            CHECK(rel_err(grads, central_differences(eng.params())) < 1e-6);
            CHECK(rel_err(dx, central_differences(x)) < 1e-6);
            CHECK(rel_err(ds, central_differences(s0)) < 1e-6);
            // Slot 1 restarts at t = 0: its initial state gets exactly no gradient.
            for (int i = 0; i < p.spec.state_size(); ++i) CHECK(ds[p.spec.state_size() + i] == 0.0);

            // The float executor's gradients agree with the double engine's (float32 rounding in
            // forward and backward: ~1e-6 relative, bound 1e-4).
            CpuSequenceExecutor seq(p.spec);
            seq.load(p.w);
            std::vector<float> yf(ny), dyf(dy.begin(), dy.end()), dxf(x.size()), dsf(s0.size());
            seq.forward(p.T, p.B, p.x, p.starts, p.state0, yf);
            seq.zero_gradients();
            seq.backward(dyf, dxf, dsf);
            std::vector<double> gf(seq.parameter_gradients().begin(),
                                   seq.parameter_gradients().end());
            CHECK(rel_err(gf, grads) < 1e-4);
            CHECK(rel_err(to_d(dxf), dx) < 1e-4);
            CHECK(rel_err(to_d(dsf), ds) < 1e-4);
          }
        }
    }
}

TEST_CASE("resets cut the gradient exactly") {
  Problem p = make_problem(CellType::kLstm, 2, 0, 3, 8, 2);
  std::fill(p.starts.begin(), p.starts.end(), 0);
  p.starts[static_cast<size_t>(4) * p.B + 0] = 1;  // slot 0 restarts at t = 4
  CpuSequenceExecutor seq(p.spec);
  seq.load(p.w);
  const size_t ny = static_cast<size_t>(p.T) * p.B * p.spec.hidden;
  std::vector<float> y(ny), dy(ny, 0.0f), dx(p.x.size()), ds(p.state0.size());
  seq.forward(p.T, p.B, p.x, p.starts, p.state0, y);
  // Loss only on slot 0 at steps >= 4: nothing before the reset may receive gradient.
  for (int t = 4; t < p.T; ++t)
    for (int j = 0; j < p.spec.hidden; ++j)
      dy[(static_cast<size_t>(t) * p.B) * p.spec.hidden + j] = 1;
  seq.backward(dy, dx, ds);
  for (int t = 0; t < 4; ++t)
    for (int i = 0; i < p.spec.input; ++i)
      CHECK(dx[(static_cast<size_t>(t) * p.B) * p.spec.input + i] == 0.0f);
  for (float v : ds) CHECK(v == 0.0f);
  double after = 0;
  for (int i = 0; i < p.spec.input; ++i)
    after += std::abs(dx[(static_cast<size_t>(5) * p.B) * p.spec.input + i]);
  CHECK(after > 0);
}

TEST_CASE("canonical round trips through every executor are bit-exact") {
  for (CellType cell : kCells) {
    for (int layers = 1; layers <= 3; ++layers) {
      CAPTURE(to_string(cell));
      const Problem p = make_problem(cell, layers, 0, 90 + layers);
      CpuStepExecutor step(p.spec, 3);
      step.load(p.w);
      CHECK(step.weights() == p.w);
      CpuSequenceExecutor seq(p.spec);
      seq.load(p.w);
      CHECK(seq.weights() == p.w);
      const auto tensors = p.w.to_tensors("core.");
      CHECK(CanonicalWeights::from_tensors(p.spec, tensors, "core.") == p.w);
      CHECK(tensors.at("core.weight_ih_l0").shape == std::vector<int64_t>{p.spec.gates() * 4, 3});
    }
  }
}

TEST_CASE("step executor state can be read written and reset per slot") {
  const Problem p = make_problem(CellType::kLstm, 2, 0, 4, 5, 3);
  CpuStepExecutor step(p.spec, p.B);
  step.load(p.w);
  step.set_states(p.state0);
  std::vector<float> s(static_cast<size_t>(p.spec.state_size()));
  step.get_state(2, s);
  CHECK(std::equal(s.begin(), s.end(), p.state0.begin() + 2 * p.spec.state_size()));
  step.reset(2);
  step.get_state(2, s);
  for (float v : s) CHECK(v == 0.0f);
  // A slot reset by hand behaves like an episode start.
  std::vector<float> h1(static_cast<size_t>(p.B) * p.spec.hidden), h2 = h1;
  const std::vector<uint8_t> none(static_cast<size_t>(p.B), 0), start_2 = {0, 0, 1};
  auto x0 = std::span(p.x).subspan(0, static_cast<size_t>(p.B) * p.spec.input);
  step.step(x0, none, h1);
  step.set_states(p.state0);
  step.step(x0, start_2, h2);
  for (int j = 0; j < p.spec.hidden; ++j)
    CHECK(h1[2 * p.spec.hidden + j] == h2[2 * p.spec.hidden + j]);
  CHECK_THROWS_AS(step.get_state(3, s), std::invalid_argument);
  CHECK_THROWS_AS(step.step(x0.subspan(1), none, h1), std::invalid_argument);
  CpuStepExecutor other({CellType::kGru, 3, 4, 2, 0}, 3);
  CHECK_THROWS_AS(other.load(p.w), std::invalid_argument);
}

TEST_CASE("step executor steps without heap allocation") {
  if (!recur::test::AllocationCounter::available()) {
    recur::test::skip("allocation counting is off in sanitizer builds");
    return;
  }
  for (auto [cell, B, H] :
       {std::tuple{CellType::kLstm, 16, 128}, std::tuple{CellType::kGru, 64, 64},
        std::tuple{CellType::kLstm, 256, 256}, std::tuple{CellType::kMinGru, 64, 128},
        std::tuple{CellType::kLstmLn, 64, 128}, std::tuple{CellType::kMinGruHighway, 64, 128}}) {
    CoreSpec spec{cell, 8, H, 2, 0};
    recur::Rng rng(1);
    CpuStepExecutor step(spec, B);
    step.load(CanonicalWeights::random(spec, rng));
    std::vector<float> x(static_cast<size_t>(B) * 8, 0.5f), h(static_cast<size_t>(B) * H);
    std::vector<uint8_t> starts(static_cast<size_t>(B), 0);
    step.step(x, starts, h);
    recur::test::AllocationCounter counter;
    for (int t = 0; t < 20; ++t) {
      starts[static_cast<size_t>(t % B)] = 1;
      step.step(x, starts, h);
      starts[static_cast<size_t>(t % B)] = 0;
    }
    CHECK(counter.count() == 0);
  }
}

TEST_CASE("mingru has no recurrent weights and refuses what it lacks") {
  const CoreSpec spec{CellType::kMinGru, 3, 4, 1, 0};
  CHECK(parse_cell_type("mingru") == CellType::kMinGru);
  CHECK(spec.gates() == 2);
  CHECK(spec.state_size() == 4);
  const CanonicalWeights w = CanonicalWeights::zeros(spec);
  CHECK(w.layers[0].weight_ih.size() == 2 * 4 * 3);
  CHECK(w.layers[0].weight_hh.empty());
  CHECK(w.layers[0].bias_hh.empty());
  CHECK(w.size() == 2 * 4 * 3 + 2 * 4);
  const auto tensors = w.to_tensors("core.");
  CHECK(tensors.size() == 2);  // weight_ih_l0 and bias_ih_l0 only
  CHECK(tensors.count("core.weight_hh_l0") == 0);
  // The CUDA step kernel runs it (device.actor: cuda); cuDNN does not (its executor and weight
  // space refuse it, naming the way out), and the GPU learner runs it on the fused CUDA sequence
  // executor instead (tests/policy/cuda_sequence_executor_test.cc).
  CHECK_NOTHROW(require_cuda_core(spec));
  CHECK_THROWS_WITH_AS(require_cudnn_core(spec), doctest::Contains("device.learner: cpu"),
                       recur::Error);
  CHECK_NOTHROW(require_cudnn_core({CellType::kGru, 3, 4, 2, 0}));
  check_gpu_learner_builds(spec);
  CHECK(make_sequence_executor(spec, Placement{}) != nullptr);  // the CPU builds it
}

TEST_CASE("mingru's scan: z = 1 copies h~, z = 0 keeps the state, a reset zeroes it") {
  // One unit, one input: W_z = 0 with b_z = +-40 saturates z; h~ = 2 x + 0.5.
  const CoreSpec spec{CellType::kMinGru, 1, 1, 1, 0};
  CanonicalWeights w = CanonicalWeights::zeros(spec);
  w.layers[0].weight_ih = {0.0f, 2.0f};
  w.layers[0].bias_ih = {-40.0f, 0.5f};  // z ~ 0: h stays
  CpuSequenceExecutor seq(spec);
  seq.load(w);
  const std::vector<float> x = {1, 2, 3}, h0 = {0.75f};
  const std::vector<uint8_t> starts = {0, 0, 1};
  std::vector<float> y(3), hT(1);
  seq.forward(3, 1, x, starts, h0, y, hT);
  CHECK(y[0] == doctest::Approx(0.75));
  CHECK(y[1] == doctest::Approx(0.75));
  CHECK(y[2] == doctest::Approx(0.0));  // reset at t = 2, and z ~ 0 keeps the zero
  w.layers[0].bias_ih = {40.0f, 0.5f};  // z ~ 1: h = h~
  seq.load(w);
  seq.forward(3, 1, x, starts, h0, y, hT);
  CHECK(y[0] == doctest::Approx(2.5));
  CHECK(y[2] == doctest::Approx(6.5));
  CHECK(hT[0] == doctest::Approx(6.5));
}

TEST_CASE("a mingru stack is residual: layer k >= 1 outputs h_k + its input") {
  // Two layers; layer 1's weights all zero: z = 1/2, h~ = 0, so with a zero state its h is 0 and
  // the core's output is layer 0's h unchanged (a plain stack would output 0).
  const CoreSpec spec{CellType::kMinGru, 2, 3, 2, 0};
  recur::Rng rng(3);
  CanonicalWeights w = CanonicalWeights::random(spec, rng);
  std::fill(w.layers[1].weight_ih.begin(), w.layers[1].weight_ih.end(), 0.0f);
  std::fill(w.layers[1].bias_ih.begin(), w.layers[1].bias_ih.end(), 0.0f);
  CpuStepExecutor step(spec, 1);
  step.load(w);
  const std::vector<float> x = {0.3f, -0.7f};
  const std::vector<uint8_t> start = {1};
  std::vector<float> y(3), state(static_cast<size_t>(spec.state_size()));
  step.step(x, start, y);
  step.get_state(0, state);
  for (int j = 0; j < 3; ++j) {
    CHECK(y[static_cast<size_t>(j)] == state[static_cast<size_t>(j)]);  // out = h_0 + h_1, h_1 = 0
    CHECK(state[static_cast<size_t>(3 + j)] == 0.0f);
  }
}

TEST_CASE("mingru_highway: a third gate block gates each layer's h against the output below") {
  const CoreSpec spec{CellType::kMinGruHighway, 2, 3, 2, 0};
  CHECK(parse_cell_type("mingru_highway") == CellType::kMinGruHighway);
  CHECK(spec.gates() == 3);
  CHECK(spec.state_size() == 2 * 3);  // h per layer; the highway keeps no state
  const CanonicalWeights zero = CanonicalWeights::zeros(spec);
  CHECK(zero.layers[0].weight_ih.size() == 3 * 3 * 2);
  CHECK(zero.layers[1].weight_ih.size() == 3 * 3 * 3);
  CHECK(zero.layers[0].weight_hh.empty());
  CHECK(zero.to_tensors().size() == 4);  // weight_ih and bias_ih per layer
  CHECK_THROWS_WITH_AS(require_cudnn_core(spec), doctest::Contains("mingru_highway"), recur::Error);
  check_gpu_learner_builds(spec);

  // Saturate the gates through their biases (W_p = 0): s = 1 passes a layer's own h, s = 0 the
  // output below it (and at layer 0, zero: out_{-1} = 0). The states stay the scan's h either way.
  recur::Rng rng(8);
  CanonicalWeights w = CanonicalWeights::random(spec, rng);
  for (auto& l : w.layers) {
    const int in = static_cast<int>(l.weight_ih.size()) / 9;
    std::fill(l.weight_ih.begin() + 6 * in, l.weight_ih.end(), 0.0f);  // rows of block p
  }
  auto run = [&](float p0, float p1, std::vector<float>& y, std::vector<float>& state) {
    std::fill_n(w.layers[0].bias_ih.begin() + 6, 3, p0);
    std::fill_n(w.layers[1].bias_ih.begin() + 6, 3, p1);
    CpuStepExecutor step(spec, 1);
    step.load(w);
    const std::vector<float> x = {0.4f, -0.9f};
    const std::vector<uint8_t> start = {1};
    y.assign(3, 0.0f);
    state.assign(static_cast<size_t>(spec.state_size()), 0.0f);
    step.step(x, start, y);
    step.get_state(0, state);
    // The sequence executor computes the same output.
    CpuSequenceExecutor seq(spec);
    seq.load(w);
    std::vector<float> y_seq(3), s0(static_cast<size_t>(spec.state_size()), 0.0f);
    seq.forward(1, 1, x, start, s0, y_seq);
    CHECK(recur::test::rel_err(to_d(y_seq), to_d(y)) < 1e-6);
  };
  std::vector<float> y, state;
  run(40.0f, 40.0f, y, state);  // s = 1 everywhere: the top layer's h
  for (int j = 0; j < 3; ++j) CHECK(y[static_cast<size_t>(j)] == doctest::Approx(state[3 + j]));
  run(40.0f, -40.0f, y, state);  // layer 1 closed: layer 0's h passes through it
  for (int j = 0; j < 3; ++j) CHECK(y[static_cast<size_t>(j)] == doctest::Approx(state[j]));
  run(-40.0f, -40.0f, y, state);  // both closed: out_{-1} = 0 all the way up
  for (int j = 0; j < 3; ++j) CHECK(std::abs(y[static_cast<size_t>(j)]) < 1e-12);
  CHECK(std::abs(state[0]) + std::abs(state[3]) > 0);  // the scan still ran
}

TEST_CASE("lstm_ln: no gate biases, a (5, H) LayerNorm gain and shift per layer, CPU only") {
  const CoreSpec spec{CellType::kLstmLn, 3, 4, 2, 0};
  CHECK(parse_cell_type("lstm_ln") == CellType::kLstmLn);
  CHECK(spec.gates() == 4);
  CHECK(spec.state_size() == 2 * 2 * 4);  // h and c per layer
  recur::Rng rng(2);
  const CanonicalWeights w = CanonicalWeights::random(spec, rng, 1.0f);
  CHECK(w.layers[0].bias_ih.empty());
  CHECK(w.layers[0].bias_hh.empty());
  CHECK(w.size() == (16 * 3 + 16 * 4 + 2 * 20) + (16 * 4 + 16 * 4 + 2 * 20));
  // TF's initializers: gains 1, shifts 0, the forget block's shift = forget_bias.
  for (int j = 0; j < 20; ++j) {
    CHECK(w.layers[1].norm_weight[static_cast<size_t>(j)] == 1.0f);
    CHECK(w.layers[1].norm_bias[static_cast<size_t>(j)] == (j >= 4 && j < 8 ? 1.0f : 0.0f));
  }
  const auto tensors = w.to_tensors("core.");
  CHECK(tensors.size() == 8);  // weight_ih, weight_hh, norm_weight, norm_bias per layer
  CHECK(tensors.at("core.norm_weight_l1").shape == std::vector<int64_t>{5, 4});
  CHECK(tensors.count("core.bias_ih_l0") == 0);
  CHECK(CanonicalWeights::from_tensors(spec, tensors, "core.") == w);
  CHECK_THROWS_WITH_AS(require_cudnn_core(spec), doctest::Contains("policy.core: lstm"),
                       recur::Error);
  CHECK_NOTHROW(require_cuda_core(spec));  // the CUDA step executor runs it
  check_gpu_learner_builds(spec);
  CoreSpec bad = spec;
  bad.norm_epsilon = 0;
  CHECK_THROWS_AS(bad.validate(), recur::Error);
}

TEST_CASE("lstm_ln normalizes: gates do not change when the weights are scaled, c is normalized") {
  // Layer norm makes each gate block invariant to the scale of its pre-activation (up to eps):
  // scaling every matrix by 3 leaves the outputs nearly unchanged, where a plain LSTM's change.
  Problem p = make_problem(CellType::kLstmLn, 1, 0, 21);
  for (auto& v : p.w.layers[0].norm_weight) v = 1.0f;  // c's gain 1 and shift 0 below
  for (int j = 16; j < 20; ++j) p.w.layers[0].norm_bias[static_cast<size_t>(j)] = 0.0f;
  std::vector<double> y, s;
  reference(p, y, s);
  Problem scaled = p;
  for (auto* v : {&scaled.w.layers[0].weight_ih, &scaled.w.layers[0].weight_hh})
    for (auto& e : *v) e *= 3.0f;
  std::vector<double> y3, s3;
  reference(scaled, y3, s3);
  CHECK(rel_err(y3, y) < 1e-3);
  // The stored c of every slot has mean 0 and (biased) variance var / (var + eps) ~ 1.
  const int H = p.spec.hidden;
  for (int b = 0; b < p.B; ++b) {
    const double* c = s.data() + static_cast<size_t>(b) * p.spec.state_size() + H;
    double mean = 0, var = 0;
    for (int j = 0; j < H; ++j) mean += c[j] / H;
    for (int j = 0; j < H; ++j) var += (c[j] - mean) * (c[j] - mean) / H;
    CHECK(std::abs(mean) < 1e-12);
    CHECK(var == doctest::Approx(1.0).epsilon(1e-2));
  }
}
