// The sequence plan (policy/sequence_plan.h): hand-checked cuts, the row maps' consistency, and
// an emulation of what the cuDNN sequence executor does with it, on the CPU: the CPU sequence
// executor run on the padded (max_length, N) batch without resets must equal the same executor
// run on the original (T, B) batch with resets, forward and backward.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "core/rng.h"
#include "policy/cpu/cpu_sequence_executor.h"
#include "policy/sequence_plan.h"
#include "tests/support/rel_err.h"

using namespace recur::policy;

namespace {

// episode_start (T, B) from rows of flags, row t = step t.
std::vector<uint8_t> flags(std::initializer_list<std::initializer_list<int>> rows) {
  std::vector<uint8_t> f;
  for (const auto& r : rows)
    for (int v : r) f.push_back(static_cast<uint8_t>(v));
  return f;
}

// Every invariant that does not depend on the particular flags.
void check_invariants(const SequencePlan& p, const std::vector<uint8_t>& starts) {
  const int T = p.T, B = p.B, N = p.count;
  REQUIRE(p.subs.size() == static_cast<size_t>(N));
  REQUIRE(p.lengths.size() == static_cast<size_t>(N));
  REQUIRE(p.initial_row.size() == static_cast<size_t>(N));
  REQUIRE(p.final_sub.size() == static_cast<size_t>(B));
  REQUIRE(p.padded_row.size() == static_cast<size_t>(T) * B);
  REQUIRE(p.source_row.size() == static_cast<size_t>(p.max_length) * N);
  CHECK(N >= B);
  int total = 0, longest = 0;
  for (int n = 0; n < N; ++n) {
    const SubSequence& s = p.subs[static_cast<size_t>(n)];
    CHECK(s.length >= 1);
    CHECK(p.lengths[static_cast<size_t>(n)] == s.length);
    total += s.length;
    longest = std::max(longest, s.length);
    const bool flag0 = starts[static_cast<size_t>(s.t0) * B + s.env] != 0;
    CHECK(s.starts_episode == (s.t0 > 0 || flag0));
    CHECK(p.initial_row[static_cast<size_t>(n)] == (s.starts_episode ? -1 : s.env));
    // No episode start inside a sub-sequence; one (or the batch start) at its first step.
    CHECK((s.t0 == 0 || flag0));
    for (int i = 1; i < s.length; ++i)
      CHECK(starts[static_cast<size_t>(s.t0 + i) * B + s.env] == 0);
  }
  CHECK(total == T * B);
  CHECK(longest == p.max_length);
  // padded_row and source_row are inverse on the valid rows; everything else is padding.
  std::vector<int> hits(p.source_row.size(), 0);
  for (int r = 0; r < T * B; ++r) {
    const int32_t pr = p.padded_row[static_cast<size_t>(r)];
    REQUIRE(pr >= 0);
    REQUIRE(pr < static_cast<int32_t>(p.source_row.size()));
    CHECK(p.source_row[static_cast<size_t>(pr)] == r);
    ++hits[static_cast<size_t>(pr)];
  }
  int padding = 0;
  for (size_t r = 0; r < p.source_row.size(); ++r) {
    CHECK(hits[r] <= 1);
    if (p.source_row[r] < 0) {
      ++padding;
      // A padding row lies past its sub-sequence's end.
      const int n = static_cast<int>(r % static_cast<size_t>(N));
      const int i = static_cast<int>(r / static_cast<size_t>(N));
      CHECK(i >= p.lengths[static_cast<size_t>(n)]);
    }
  }
  CHECK(padding == p.max_length * N - T * B);
  // Env b's final sub-sequence holds its last step.
  for (int b = 0; b < B; ++b) {
    const SubSequence& s = p.subs[static_cast<size_t>(p.final_sub[static_cast<size_t>(b)])];
    CHECK(s.env == b);
    CHECK(s.t0 + s.length == T);
  }
}

}  // namespace

TEST_CASE("sequence plan without resets has one sub-sequence per env") {
  const int T = 4, B = 3;
  const std::vector<uint8_t> starts(static_cast<size_t>(T) * B, 0);
  const SequencePlan p = plan_sequences(T, B, starts);
  check_invariants(p, starts);
  CHECK(p.count == B);
  CHECK(p.max_length == T);
  CHECK(p.equal_lengths());
  for (int b = 0; b < B; ++b) {
    CHECK(p.subs[static_cast<size_t>(b)].env == b);
    CHECK(p.subs[static_cast<size_t>(b)].t0 == 0);
    CHECK(p.lengths[static_cast<size_t>(b)] == T);
    CHECK(p.initial_row[static_cast<size_t>(b)] == b);
    CHECK(p.final_sub[static_cast<size_t>(b)] == b);
  }
  // With N = B the padded layout is the original one.
  for (int r = 0; r < T * B; ++r) {
    CHECK(p.padded_row[static_cast<size_t>(r)] == r);
    CHECK(p.source_row[static_cast<size_t>(r)] == r);
  }
}

TEST_CASE("sequence plan with resets at t = 0 zeroes those initial states only") {
  const auto starts = flags({{1, 0, 1}, {0, 0, 0}, {0, 0, 0}});
  const SequencePlan p = plan_sequences(3, 3, starts);
  check_invariants(p, starts);
  CHECK(p.count == 3);
  CHECK(p.equal_lengths());
  CHECK(p.initial_row == std::vector<int32_t>{-1, 1, -1});
  CHECK(p.subs[0].starts_episode);
  CHECK_FALSE(p.subs[1].starts_episode);
}

TEST_CASE("sequence plan cuts one env several times") {
  // Env 0: starts at t = 2 and t = 3; env 1: at t = 0 and t = 4.
  const auto starts = flags({{0, 1}, {0, 0}, {1, 0}, {1, 0}, {0, 1}});
  const int T = 5, B = 2;
  const SequencePlan p = plan_sequences(T, B, starts);
  check_invariants(p, starts);
  REQUIRE(p.count == 5);
  // Env-major: env 0 [0,2) [2,3) [3,5), env 1 [0,4) [4,5).
  const int env[] = {0, 0, 0, 1, 1}, t0[] = {0, 2, 3, 0, 4}, len[] = {2, 1, 2, 4, 1};
  for (int n = 0; n < 5; ++n) {
    CHECK(p.subs[static_cast<size_t>(n)].env == env[n]);
    CHECK(p.subs[static_cast<size_t>(n)].t0 == t0[n]);
    CHECK(p.lengths[static_cast<size_t>(n)] == len[n]);
  }
  CHECK(p.max_length == 4);
  CHECK_FALSE(p.equal_lengths());
  CHECK(p.initial_row == std::vector<int32_t>{0, -1, -1, -1, -1});
  CHECK(p.final_sub == std::vector<int32_t>{2, 4});
  // Step 3 of env 0 (original row 3*2+0 = 6) is step 0 of sub-sequence 2: padded row 0*5+2.
  CHECK(p.padded_row[6] == 2);
  // Step 3 of env 1 (row 7) is step 3 of sub-sequence 3: padded row 3*5+3 = 18.
  CHECK(p.padded_row[7] == 18);
  CHECK(p.source_row[18] == 7);
  CHECK(p.source_row[3 * 5 + 0] == -1);  // sub-sequence 0 has 2 steps
}

TEST_CASE("sequence plan with every step a reset has T times B sub-sequences of length 1") {
  const int T = 3, B = 4;
  const std::vector<uint8_t> starts(static_cast<size_t>(T) * B, 1);
  SequencePlan p;
  plan_sequences_into(p, T, B, starts);
  check_invariants(p, starts);
  CHECK(p.count == T * B);
  CHECK(p.max_length == 1);
  for (int32_t r : p.initial_row) CHECK(r == -1);
  // Reusing the plan for a smaller problem resizes every vector.
  const std::vector<uint8_t> none(2, 0);
  plan_sequences_into(p, 1, 2, none);
  check_invariants(p, none);
  CHECK(p.count == 2);
}

TEST_CASE("sequence plan random flags keep every invariant") {
  recur::Rng rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const int T = 1 + static_cast<int>(rng.uniform_int(9));
    const int B = 1 + static_cast<int>(rng.uniform_int(6));
    const double p_reset = rng.uniform();
    std::vector<uint8_t> starts(static_cast<size_t>(T) * B);
    for (auto& f : starts) f = rng.uniform() < p_reset ? 1 : 0;
    check_invariants(plan_sequences(T, B, starts), starts);
  }
}

TEST_CASE("sequence plan rejects flags other than 0 and 1 and wrong sizes") {
  std::vector<uint8_t> starts = {0, 2};
  CHECK_THROWS_AS(plan_sequences(1, 2, starts), std::invalid_argument);
  starts = {0, 1, 0};
  CHECK_THROWS_AS(plan_sequences(1, 2, starts), std::invalid_argument);
  CHECK_THROWS_AS(plan_sequences(0, 3, starts), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// Emulation of the cuDNN executor's data movement, on the CPU.

namespace {

struct Problem {
  CoreSpec spec;
  int T = 7, B = 5;
  CanonicalWeights w;
  std::vector<float> x, state0, dy;
  std::vector<uint8_t> starts;
};

Problem make_problem(CellType cell, int layers, float clip, uint64_t seed) {
  Problem p;
  p.spec = {cell, 3, 4, layers, clip};
  recur::Rng rng(seed);
  p.w = CanonicalWeights::zeros(p.spec);
  for (auto& l : p.w.layers)
    for (auto* v : {&l.weight_ih, &l.weight_hh, &l.bias_ih, &l.bias_hh})
      for (auto& e : *v) e = static_cast<float>(rng.uniform(-0.6, 0.6));
  const size_t tb = static_cast<size_t>(p.T) * p.B;
  p.x.resize(tb * p.spec.input);
  for (auto& e : p.x) e = static_cast<float>(rng.uniform(-1.5, 1.5));
  p.state0.resize(static_cast<size_t>(p.B) * p.spec.state_size());
  for (auto& e : p.state0) e = static_cast<float>(rng.uniform(-0.9, 0.9));
  p.dy.resize(tb * p.spec.hidden);
  for (auto& e : p.dy) e = static_cast<float>(rng.uniform(-1.0, 1.0));
  p.starts.assign(tb, 0);
  for (auto& f : p.starts) f = rng.uniform() < 0.2 ? 1 : 0;
  p.starts[1] = 1;                             // env 1 restarts at t = 0
  p.starts[static_cast<size_t>(3) * p.B] = 1;  // env 0 restarts at t = 3
  p.starts[static_cast<size_t>(4) * p.B] = 1;  // ... and at t = 4 (a length-1 sub-sequence)
  return p;
}

using recur::test::rel_err;

// dst row r = index[r] >= 0 ? src row index[r] : zeros (the host twin of launch_gather_rows).
void gather_rows(std::span<const float> src, std::span<float> dst, std::span<const int32_t> index,
                 int width) {
  const auto w = static_cast<size_t>(width);
  for (size_t r = 0; r < index.size(); ++r)
    for (size_t j = 0; j < w; ++j)
      dst[r * w + j] = index[r] >= 0 ? src[static_cast<size_t>(index[r]) * w + j] : 0.0f;
}

struct Outputs {
  std::vector<float> y, final_state, dx, d_state0, grads;
};

// The reference: the CPU executor on (T, B) with resets.
Outputs run_original(const Problem& p) {
  CpuSequenceExecutor ex(p.spec);
  ex.load(p.w);
  Outputs o;
  const size_t tb = static_cast<size_t>(p.T) * p.B;
  o.y.resize(tb * p.spec.hidden);
  o.final_state.resize(p.state0.size());
  o.dx.resize(tb * p.spec.input);
  o.d_state0.resize(p.state0.size());
  ex.forward(p.T, p.B, p.x, p.starts, p.state0, o.y, o.final_state);
  ex.zero_gradients();
  ex.backward(p.dy, o.dx, o.d_state0);
  o.grads.assign(ex.parameter_gradients().begin(), ex.parameter_gradients().end());
  return o;
}

// What the cuDNN executor does: the padded (max_length, N) batch, no resets, initial states per
// initial_row; outputs gathered back by padded_row, initial-state gradients by initial_row. The
// CPU executor runs every sub-sequence on to max_length over its padding (zero inputs, zero dy),
// which is what cuDNN runs when it is told full lengths for its persistent algorithm
// (cudnn_sequence_executor.h): y, dx, the initial-state and weight gradients must still match.
Outputs run_planned(const Problem& p) {
  const SequencePlan plan = plan_sequences(p.T, p.B, p.starts);
  const int N = plan.count, M = plan.max_length, S = p.spec.state_size();
  const int H = p.spec.hidden, in = p.spec.input;
  const size_t rows = static_cast<size_t>(M) * N, tb = static_cast<size_t>(p.T) * p.B;
  const auto s = static_cast<size_t>(S);

  std::vector<float> x_pad(rows * in), h0_pad(static_cast<size_t>(N) * s, 0.0f);
  gather_rows(p.x, x_pad, plan.source_row, in);
  for (int n = 0; n < N; ++n) {
    const int32_t b = plan.initial_row[static_cast<size_t>(n)];
    if (b >= 0)
      std::copy_n(p.state0.begin() + static_cast<ptrdiff_t>(static_cast<size_t>(b) * s), s,
                  h0_pad.begin() + static_cast<ptrdiff_t>(static_cast<size_t>(n) * s));
  }
  const std::vector<uint8_t> no_resets(rows, 0);
  CpuSequenceExecutor ex(p.spec);
  ex.load(p.w);
  std::vector<float> y_pad(rows * H);
  ex.forward(M, N, x_pad, no_resets, h0_pad, y_pad);

  Outputs o;
  o.y.resize(tb * H);
  gather_rows(y_pad, o.y, plan.padded_row, H);

  // Backward: dy scattered into the padded layout (zeros in padding).
  std::vector<float> dy_pad(rows * H), dx_pad(rows * in), dh0_pad(static_cast<size_t>(N) * s);
  gather_rows(p.dy, dy_pad, plan.source_row, H);
  ex.zero_gradients();
  ex.backward(dy_pad, dx_pad, dh0_pad);
  o.dx.resize(tb * in);
  gather_rows(dx_pad, o.dx, plan.padded_row, in);
  o.d_state0.assign(p.state0.size(), 0.0f);
  for (int n = 0; n < N; ++n) {
    const int32_t b = plan.initial_row[static_cast<size_t>(n)];
    if (b >= 0)
      std::copy_n(dh0_pad.begin() + static_cast<ptrdiff_t>(static_cast<size_t>(n) * s), s,
                  o.d_state0.begin() + static_cast<ptrdiff_t>(static_cast<size_t>(b) * s));
  }
  o.grads.assign(ex.parameter_gradients().begin(), ex.parameter_gradients().end());

  // Final states: on the padded batch the CPU executor runs on past a sub-sequence's end (cuDNN
  // stops there), so run each env's final sub-sequence alone for its exact last state.
  o.final_state.resize(p.state0.size());
  for (int b = 0; b < p.B; ++b) {
    const int n = plan.final_sub[static_cast<size_t>(b)];
    const SubSequence& sub = plan.subs[static_cast<size_t>(n)];
    std::vector<float> xs(static_cast<size_t>(sub.length) * in),
        ys(static_cast<size_t>(sub.length) * H);
    for (int i = 0; i < sub.length; ++i)
      std::copy_n(
          p.x.begin() + static_cast<ptrdiff_t>((static_cast<size_t>(sub.t0 + i) * p.B + b) * in),
          in, xs.begin() + static_cast<ptrdiff_t>(static_cast<size_t>(i) * in));
    const std::vector<uint8_t> none(static_cast<size_t>(sub.length), 0);
    CpuSequenceExecutor one(p.spec);
    one.load(p.w);
    one.forward(sub.length, 1, xs, none,
                std::span<const float>(h0_pad).subspan(static_cast<size_t>(n) * s, s), ys,
                std::span<float>(o.final_state).subspan(static_cast<size_t>(b) * s, s));
    // The sub-sequence's outputs alone equal the padded run's (padding never leaks backwards).
    std::vector<float> ys_pad(ys.size());
    for (int i = 0; i < sub.length; ++i)
      std::copy_n(y_pad.begin() + static_cast<ptrdiff_t>((static_cast<size_t>(i) * N + n) * H), H,
                  ys_pad.begin() + static_cast<ptrdiff_t>(static_cast<size_t>(i) * H));
    CHECK(rel_err(ys, ys_pad) <= 1e-6);
  }
  return o;
}

}  // namespace

TEST_CASE("sequence plan emulation on the CPU equals resets forward and backward") {
  const CellType cells[] = {CellType::kLstm, CellType::kGru, CellType::kRnnTanh,
                            CellType::kRnnRelu};
  double worst_y = 0, worst_state = 0, worst_dx = 0, worst_ds = 0, worst_grad = 0;
  for (CellType cell : cells)
    for (int layers = 1; layers <= 3; ++layers)
      for (float clip : {0.0f, 0.5f}) {
        if (clip > 0 && cell != CellType::kLstm) continue;
        CAPTURE(to_string(cell));
        CAPTURE(layers);
        CAPTURE(clip);
        const Problem p = make_problem(cell, layers, clip, 100 + static_cast<uint64_t>(layers));
        const Outputs a = run_original(p), e = run_planned(p);
        const double ey = rel_err(e.y, a.y), es = rel_err(e.final_state, a.final_state);
        const double edx = rel_err(e.dx, a.dx), eds = rel_err(e.d_state0, a.d_state0);
        const double eg = rel_err(e.grads, a.grads);
        // Forward: the same float operations in the same order, up to the GEMM's blocking over
        // a different row count (1e-6). Backward sums the same terms in another order (1e-5).
        CHECK(ey <= 1e-6);
        CHECK(es <= 1e-6);
        CHECK(edx <= 1e-5);
        CHECK(eds <= 1e-5);
        CHECK(eg <= 1e-5);
        worst_y = std::max(worst_y, ey);
        worst_state = std::max(worst_state, es);
        worst_dx = std::max(worst_dx, edx);
        worst_ds = std::max(worst_ds, eds);
        worst_grad = std::max(worst_grad, eg);
      }
  MESSAGE("sequence plan emulation worst relative errors: y "
          << worst_y << ", final state " << worst_state << ", dx " << worst_dx
          << ", d_initial_state " << worst_ds << ", gradients " << worst_grad);
}
