// The CUDA policy actor (policy/cuda/cuda_policy_actor.h, reached through PolicyActor placed on
// Device::kCuda) against the CPU actor and the CPU learner: deterministic actions equal, log-probs
// and values within 1e-5 relative along rollouts with resets and non-zero initial states;
// sampled log-probs equal the CPU distribution's for the same actions; sampling reproducible
// from the seed and distributed as the policy says; peek_values changes no state; state round
// trips exactly. Every GPU case skips itself (with a message) without a usable GPU.
//
// Tolerance 1e-5 relative (norm over the whole rollout): the GPU computes the same float32
// expressions in a different order (cuBLAS's GEMM summation, bias added after the GEMM, FMA
// contraction, CUDA's expf/tanhf vs the host's), ~1e-7 per op, compounded over T = 10 recurrent
// steps and two MLPs; 1e-5 leaves room for that and catches any wiring error (O(1)).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "policy/devices.h"
#include "policy/policy_actor.h"
#include "policy/policy_learner.h"
#include "tests/support/alloc_counter.h"
#include "tests/support/gpu_skip.h"
#include "tests/support/rel_err.h"

#ifdef RECUR_WITH_CUDA
#include "policy/cuda/cuda_policy_actor.h"
#endif

using namespace recur::policy;

namespace {

PolicySpec actor_spec(ActionKind kind, bool shared, CellType cell) {
  PolicySpec s;
  s.obs_dim = 5;
  s.action_kind = kind;
  s.action_dim = kind == ActionKind::kDiscrete ? 4 : 3;
  s.encoder = {16};
  s.head = {8};  // a hidden layer in both heads
  // relu for GRU, tanh for LSTM: both activations of the device MLP get exercised.
  s.activation = cell == CellType::kGru ? Activation::kRelu : Activation::kTanh;
  s.cell = cell;
  s.hidden = 32;
  s.layers = 2;
  s.shared_core = shared;
  s.actor_gain = 1.0f;  // not near-uniform: the action choice depends on the inputs
  s.log_std_init = -0.3f;
  return s;
}

Placement cuda_placement(bool graph, StepIo io = StepIo::kCopy) {
  Placement p;
  p.device = Device::kCuda;
  p.step.use_graph = graph;
  p.step.io = io;
  return p;
}

[[maybe_unused]] int action_floats(const PolicySpec& s) {
  return s.action_kind == ActionKind::kDiscrete ? 1 : s.action_dim;
}

}  // namespace

#ifndef RECUR_WITH_CUDA

TEST_CASE("policy actor on cuda fails clearly in a build without CUDA") {
  const PolicySpec spec = actor_spec(ActionKind::kDiscrete, true, CellType::kLstm);
  CHECK_THROWS_AS(PolicyActor(spec, 2, cuda_placement(true)), recur::Error);
}

#else

namespace {

using recur::test::rel_err;

std::vector<float> random_states(const PolicySpec& spec, int B, recur::Rng& rng) {
  std::vector<float> s(static_cast<size_t>(B) * spec.state_size());
  for (auto& v : s) v = static_cast<float>(rng.uniform(-0.8, 0.8));  // non-zero
  return s;
}

// A sampled rollout of one actor: what the learner needs to evaluate it.
struct Rollout {
  int T = 0, B = 0;
  std::vector<float> nobs, actions, logp, values, state0;
  std::vector<uint8_t> starts;
};

Rollout sampled_rollout(PolicyActor& actor, int T, int B, uint64_t seed) {
  const PolicySpec& s = actor.spec();
  Rollout r;
  r.T = T;
  r.B = B;
  recur::Rng data(seed), sampler(seed + 1);
  r.state0 = random_states(s, B, data);
  actor.set_states(r.state0);
  std::vector<float> obs(static_cast<size_t>(B) * s.obs_dim);
  std::vector<float> a(static_cast<size_t>(B) * action_floats(s)), lp(B), v(B);
  std::vector<uint8_t> st(static_cast<size_t>(B));
  for (int t = 0; t < T; ++t) {
    for (auto& o : obs) o = static_cast<float>(data.uniform(-2, 2));
    for (int b = 0; b < B; ++b) st[static_cast<size_t>(b)] = (t + 2 * b) % 7 == 0;
    actor.act(obs, st, sampler, false, a, lp, v);
    r.nobs.insert(r.nobs.end(), actor.normalized_obs().begin(), actor.normalized_obs().end());
    r.actions.insert(r.actions.end(), a.begin(), a.end());
    r.logp.insert(r.logp.end(), lp.begin(), lp.end());
    r.values.insert(r.values.end(), v.begin(), v.end());
    r.starts.insert(r.starts.end(), st.begin(), st.end());
  }
  return r;
}

}  // namespace

TEST_CASE("cuda policy actor matches the cpu actor deterministically") {
  if (!recur::test::gpu_or_skip("cuda policy actor matches the cpu actor deterministically"))
    return;
  for (ActionKind kind : {ActionKind::kDiscrete, ActionKind::kContinuous})
    for (bool shared : {true, false})
      for (CellType cell : {CellType::kLstm, CellType::kGru})
        for (bool graph : {false, true})
          for (int groups : {1, 2}) {  // 2: env.groups, one GPU actor (and graph) per half
            CAPTURE(static_cast<int>(kind));
            CAPTURE(shared);
            CAPTURE(to_string(cell));
            CAPTURE(graph);
            CAPTURE(groups);
            const PolicySpec spec = actor_spec(kind, shared, cell);
            recur::Rng init(5);
            TensorMap params = init_policy(spec, init);
            // Non-trivial normalizer statistics, so that normalization is part of the comparison.
            for (auto& m : params.at("obs_norm.mean").data)
              m = static_cast<float>(init.uniform(-1, 1));
            for (auto& v : params.at("obs_norm.var").data)
              v = static_cast<float>(init.uniform(0.5, 2));
            const int B = 7, T = 10;
            PolicyActor cpu(spec, B), gpu(spec, B, cuda_placement(graph), groups);
            cpu.load(params);
            gpu.load(params);
            recur::Rng data(9);
            const std::vector<float> s0 = random_states(spec, B, data);
            cpu.set_states(s0);
            gpu.set_states(s0);
            std::vector<float> obs(static_cast<size_t>(B) * spec.obs_dim);
            std::vector<float> a1(static_cast<size_t>(B) * action_floats(spec)), a2(a1.size());
            std::vector<float> lp1(B), lp2(B), v1(B), v2(B);
            std::vector<uint8_t> st(static_cast<size_t>(B));
            recur::Rng r1(11), r2(11);
            std::vector<float> all_a1, all_a2, all_lp1, all_lp2, all_v1, all_v2;
            for (int t = 0; t < T; ++t) {
              for (auto& o : obs) o = static_cast<float>(data.uniform(-2, 2));
              for (int b = 0; b < B; ++b) st[static_cast<size_t>(b)] = (t + b) % 5 == 0;
              if (t == 6) {  // an explicit reset between steps, as an evaluator may do
                cpu.reset(3);
                gpu.reset(3);
              }
              cpu.act(obs, st, r1, true, a1, lp1, v1);
              gpu.act(obs, st, r2, true, a2, lp2, v2);
              if (kind == ActionKind::kDiscrete) CHECK(a1 == a2);
              CHECK(std::vector<float>(gpu.normalized_obs().begin(), gpu.normalized_obs().end()) ==
                    std::vector<float>(cpu.normalized_obs().begin(), cpu.normalized_obs().end()));
              all_a1.insert(all_a1.end(), a1.begin(), a1.end());
              all_a2.insert(all_a2.end(), a2.begin(), a2.end());
              all_lp1.insert(all_lp1.end(), lp1.begin(), lp1.end());
              all_lp2.insert(all_lp2.end(), lp2.begin(), lp2.end());
              all_v1.insert(all_v1.end(), v1.begin(), v1.end());
              all_v2.insert(all_v2.end(), v2.begin(), v2.end());
            }
            CHECK(rel_err(all_a2, all_a1) < 1e-5);
            CHECK(rel_err(all_lp2, all_lp1) < 1e-5);
            CHECK(rel_err(all_v2, all_v1) < 1e-5);
            std::vector<float> st1(s0.size()), st2(s0.size()), after(s0.size());
            cpu.get_states(st1);
            gpu.get_states(st2);
            CHECK(rel_err(st2, st1) < 1e-5);

            // peek_values: the CPU's values, and no state changes (twice: plain, then the graph).
            for (int k = 0; k < 2; ++k) {
              for (auto& o : obs) o = static_cast<float>(data.uniform(-2, 2));
              for (int b = 0; b < B; ++b) st[static_cast<size_t>(b)] = b == 1;
              cpu.peek_values(obs, st, v1);
              gpu.peek_values(obs, st, v2);
              CHECK(rel_err(v2, v1) < 1e-5);
              gpu.get_states(after);
              CHECK(after == st2);
            }
            // And the next act continues as if no peek happened.
            cpu.act(obs, st, r1, true, a1, lp1, v1);
            gpu.act(obs, st, r2, true, a2, lp2, v2);
            CHECK(rel_err(v2, v1) < 1e-5);
            CHECK(rel_err(lp2, lp1) < 1e-5);
          }
}

TEST_CASE("cuda policy actor sampled log-probs equal the cpu learner's") {
  if (!recur::test::gpu_or_skip("cuda policy actor sampled log-probs equal the cpu learner's"))
    return;
  for (ActionKind kind : {ActionKind::kDiscrete, ActionKind::kContinuous})
    for (bool shared : {true, false})
      for (CellType cell : {CellType::kLstm, CellType::kGru}) {
        CAPTURE(static_cast<int>(kind));
        CAPTURE(shared);
        CAPTURE(to_string(cell));
        const PolicySpec spec = actor_spec(kind, shared, cell);
        recur::Rng init(6);
        const TensorMap params = init_policy(spec, init);
        PolicyActor gpu(spec, 5, cuda_placement(true));
        gpu.load(params);
        const Rollout r = sampled_rollout(gpu, 8, 5, 40);
        // The CPU learner evaluates the GPU's actions: its log-probs are the CPU distributions'.
        PolicyLearner learner(spec);
        learner.load(params);
        const size_t tb = static_cast<size_t>(r.T) * r.B;
        std::vector<float> lp(tb), ent(tb), v(tb);
        learner.evaluate(r.T, r.B, r.nobs, r.actions, r.starts, r.state0, lp, ent, v);
        CHECK(rel_err(r.logp, lp) < 1e-5);
        CHECK(rel_err(r.values, v) < 1e-5);
      }
}

TEST_CASE("cuda policy actor sampling is reproducible from the seed") {
  if (!recur::test::gpu_or_skip("cuda policy actor sampling is reproducible from the seed")) return;
  for (ActionKind kind : {ActionKind::kDiscrete, ActionKind::kContinuous}) {
    CAPTURE(static_cast<int>(kind));
    const PolicySpec spec = actor_spec(kind, false, CellType::kLstm);
    recur::Rng init(7);
    const TensorMap params = init_policy(spec, init);
    PolicyActor a(spec, 6, cuda_placement(true)), b(spec, 6, cuda_placement(true));
    a.load(params);
    b.load(params);
    const Rollout ra = sampled_rollout(a, 8, 6, 50), rb = sampled_rollout(b, 8, 6, 50);
    CHECK(ra.actions == rb.actions);  // bitwise
    CHECK(ra.logp == rb.logp);
    // A different seed gives different actions.
    PolicyActor c(spec, 6, cuda_placement(true));
    c.load(params);
    const Rollout rc = sampled_rollout(c, 8, 6, 51);
    CHECK(rc.actions != ra.actions);
  }
}

TEST_CASE("cuda policy actor samples follow the policy distribution") {
  if (!recur::test::gpu_or_skip("cuda policy actor samples follow the policy distribution")) return;
  // Every slot sees the same observation and starts an episode every step, so every draw comes
  // from one distribution: B * T = 20000 draws.
  const int B = 1000, T = 20;
  for (ActionKind kind : {ActionKind::kDiscrete, ActionKind::kContinuous}) {
    CAPTURE(static_cast<int>(kind));
    PolicySpec spec = actor_spec(kind, true, CellType::kLstm);
    spec.actor_gain = 3.0f;  // clearly non-uniform probabilities
    recur::Rng init(8);
    const TensorMap params = init_policy(spec, init);
    PolicyActor gpu(spec, B, cuda_placement(true));
    gpu.load(params);
    std::vector<float> obs(static_cast<size_t>(B) * spec.obs_dim);
    for (int b = 0; b < B; ++b)
      for (int j = 0; j < spec.obs_dim; ++j)
        obs[static_cast<size_t>(b * spec.obs_dim + j)] = 0.3f * static_cast<float>(j) - 0.5f;
    const std::vector<uint8_t> st(static_cast<size_t>(B), 1);
    std::vector<float> a(static_cast<size_t>(B) * action_floats(spec)), lp(B), v(B);
    recur::Rng sampler(99);
    const int A = spec.action_dim;

    if (kind == ActionKind::kDiscrete) {
      // The probabilities by the CPU learner: each action's log-prob at that observation (as
      // normalized by the actor: one act first).
      gpu.act(obs, st, sampler, true, a, lp, v);
      const std::span<const float> normalized = gpu.normalized_obs();
      PolicyLearner learner(spec);
      learner.load(params);
      std::vector<float> nobs(static_cast<size_t>(A) * spec.obs_dim), actions(A), p_lp(A), ent(A),
          val(A);
      for (int i = 0; i < A; ++i) {
        actions[static_cast<size_t>(i)] = static_cast<float>(i);
        for (int j = 0; j < spec.obs_dim; ++j)
          nobs[static_cast<size_t>(i * spec.obs_dim + j)] = normalized[static_cast<size_t>(j)];
      }
      const std::vector<uint8_t> starts(static_cast<size_t>(A), 1);
      const std::vector<float> zero_state(static_cast<size_t>(A) * spec.state_size(), 0.0f);
      learner.evaluate(1, A, nobs, actions, starts, zero_state, p_lp, ent, val);
      std::vector<double> counts(static_cast<size_t>(A), 0.0);
      for (int t = 0; t < T; ++t) {
        gpu.act(obs, st, sampler, false, a, lp, v);
        for (float x : a) counts[static_cast<size_t>(x)] += 1;
      }
      const double n = double{B} * T;
      for (int i = 0; i < A; ++i) {
        const double p = std::exp(double{p_lp[static_cast<size_t>(i)]});
        CAPTURE(i);
        CAPTURE(p);
        CHECK(std::abs(counts[static_cast<size_t>(i)] - n * p) <= 4 * std::sqrt(n * p * (1 - p)));
      }
    } else {
      // z = (a - mean) / sigma must be standard normal; the mean is the deterministic action.
      std::vector<float> mean(a.size());
      gpu.act(obs, st, sampler, true, mean, lp, v);
      const double sigma = std::exp(double{spec.log_std_init});
      double sum = 0, sum2 = 0;
      for (int t = 0; t < T; ++t) {
        gpu.act(obs, st, sampler, false, a, lp, v);
        for (size_t k = 0; k < a.size(); k += static_cast<size_t>(A)) {  // dimension 0 only
          const double z = (double{a[k]} - mean[k]) / sigma;
          sum += z;
          sum2 += z * z;
        }
      }
      const double n = double{B} * T, m = sum / n, var = sum2 / n - m * m;
      CHECK(std::abs(m) <= 4 / std::sqrt(n));
      CHECK(std::abs(var - 1) <= 4 * std::sqrt(2 / n));
    }
  }
}

TEST_CASE("cuda policy actor states round trip and reset") {
  if (!recur::test::gpu_or_skip("cuda policy actor states round trip and reset")) return;
  for (bool shared : {true, false})
    for (CellType cell : {CellType::kLstm, CellType::kGru}) {
      CAPTURE(shared);
      CAPTURE(to_string(cell));
      const PolicySpec spec = actor_spec(ActionKind::kDiscrete, shared, cell);
      const int B = 4;
      PolicyActor gpu(spec, B, cuda_placement(true));
      recur::Rng rng(12);
      gpu.load(init_policy(spec, rng));
      const std::vector<float> s0 = random_states(spec, B, rng);
      gpu.set_states(s0);
      std::vector<float> back(s0.size());
      gpu.get_states(back);
      CHECK(back == s0);
      gpu.reset(2);
      gpu.get_states(back);
      const auto S = static_cast<size_t>(spec.state_size());
      for (size_t i = 0; i < back.size(); ++i) {
        const bool slot2 = i / S == 2;
        CHECK(back[i] == (slot2 ? 0.0f : s0[i]));
      }
    }
}

// The zero-copy I/O path (kernels/mapped_io.h) runs the same kernels on the same inputs: every
// output, peeked value and state must equal the copy path's to the bit, sampled and
// deterministic, with resets, with B large enough that the emit kernel runs several blocks.
namespace {

// Two actors loaded with the same weights, from the same random non-zero states, over 8 steps
// (resets, sampled and deterministic acts, peeks between them): the same actions, log-probs,
// values, peeked values and final states, bit for bit.
void check_same_steps(const PolicySpec& spec, int B, PolicyActor& x, PolicyActor& y,
                      uint64_t data_seed, uint64_t rng_seed) {
  recur::Rng data(data_seed);
  const std::vector<float> s0 = random_states(spec, B, data);
  x.set_states(s0);
  y.set_states(s0);
  std::vector<float> obs(static_cast<size_t>(B) * spec.obs_dim);
  std::vector<float> a1(static_cast<size_t>(B) * action_floats(spec)), a2(a1.size());
  std::vector<float> lp1(B), lp2(B), v1(B), v2(B);
  std::vector<uint8_t> st(static_cast<size_t>(B));
  recur::Rng r1(rng_seed), r2(rng_seed);
  for (int t = 0; t < 8; ++t) {
    for (auto& o : obs) o = static_cast<float>(data.uniform(-2, 2));
    for (int b = 0; b < B; ++b) st[static_cast<size_t>(b)] = (t + b) % 5 == 0;
    const bool deterministic = t % 3 == 2;
    x.act(obs, st, r1, deterministic, a1, lp1, v1);
    y.act(obs, st, r2, deterministic, a2, lp2, v2);
    CHECK(a1 == a2);
    CHECK(lp1 == lp2);
    CHECK(v1 == v2);
    if (t % 2 == 1) {
      x.peek_values(obs, st, v1);
      y.peek_values(obs, st, v2);
      CHECK(v1 == v2);
    }
  }
  std::vector<float> st1(s0.size()), st2(s0.size());
  x.get_states(st1);
  y.get_states(st2);
  CHECK(st1 == st2);
}

}  // namespace

TEST_CASE("cuda policy actor zero-copy I/O equals the copy path bitwise") {
  if (!recur::test::gpu_or_skip("cuda policy actor zero-copy I/O equals the copy path bitwise"))
    return;
  for (ActionKind kind : {ActionKind::kDiscrete, ActionKind::kContinuous})
    for (bool shared : {true, false})
      for (int B : {3, 300})
        for (bool graph : {false, true}) {
          CAPTURE(static_cast<int>(kind));
          CAPTURE(shared);
          CAPTURE(B);
          CAPTURE(graph);
          const PolicySpec spec = actor_spec(kind, shared, CellType::kLstm);
          recur::Rng init(12);
          const TensorMap params = init_policy(spec, init);
          PolicyActor copy(spec, B, cuda_placement(true)),
              mapped(spec, B, cuda_placement(graph, StepIo::kMapped));
          copy.load(params);
          mapped.load(params);
          check_same_steps(spec, B, copy, mapped, 13, 14);
        }
}

// device.tower_streams 2: the critic's tower on its own stream (a parallel branch of the graph)
// gives the one-stream actor's actions, log-probs, values, peeked values and states bit for bit:
// the same kernels on the same inputs, only their overlap differs.
TEST_CASE("cuda policy actor with the critic's tower on its own stream equals one stream") {
  if (!recur::test::gpu_or_skip("cuda policy actor tower streams")) return;
  for (ActionKind kind : {ActionKind::kDiscrete, ActionKind::kContinuous})
    for (int B : {3, 300})
      for (bool graph : {false, true}) {
        CAPTURE(static_cast<int>(kind));
        CAPTURE(B);
        CAPTURE(graph);
        const PolicySpec spec = actor_spec(kind, false, CellType::kLstm);
        recur::Rng init(15);
        const TensorMap params = init_policy(spec, init);
        Placement two = cuda_placement(graph);
        two.step.tower_streams = 2;
        PolicyActor one_stream(spec, B, cuda_placement(graph)), two_streams(spec, B, two);
        one_stream.load(params);
        two_streams.load(params);
        check_same_steps(spec, B, one_stream, two_streams, 16, 17);
      }
}

// The stage marks of `recur bench devices --stages`: every stage of a plain act, in enqueue order,
// on the actor's stream; refused on a graph-replaying actor (no boundaries to mark).
TEST_CASE("cuda policy actor marks its stages on plain launches only") {
  if (!recur::test::gpu_or_skip("cuda policy actor marks its stages on plain launches only"))
    return;
  struct Recorder final : StageMarker {
    std::vector<std::string> names;
    void mark(const char* stage, CUstream_st*) override { names.emplace_back(stage); }
  } recorder;
  const PolicySpec spec = actor_spec(ActionKind::kDiscrete, false, CellType::kLstm);
  recur::Rng rng(3);
  const TensorMap params = init_policy(spec, rng);
  PolicyActor graph(spec, 2, cuda_placement(true));
  CHECK_THROWS_AS(graph.cuda_actor()->set_stage_marker(&recorder), std::invalid_argument);
  PolicyActor plain(spec, 2, cuda_placement(false));
  plain.load(params);
  plain.cuda_actor()->set_stage_marker(&recorder);
  std::vector<float> obs(2 * 5, 0.1f), a(2), lp(2), v(2);
  std::vector<uint8_t> st(2, 1);
  plain.act(obs, st, rng, false, a, lp, v);
  const std::vector<std::string> want = {
      StageMarker::kStart, "inputs in",   "actor encoder", "actor core", "actor head", "sample",
      "critic encoder",    "critic core", "critic head",   "outputs out"};
  CHECK(recorder.names == want);
}

TEST_CASE("cuda policy actor allocates nothing while acting") {
  if (!recur::test::gpu_or_skip("cuda policy actor allocates nothing while acting")) return;
  if (!recur::test::AllocationCounter::available()) {
    recur::test::skip("allocation counting is off in sanitizer builds");
    return;
  }
  const PolicySpec spec = actor_spec(ActionKind::kContinuous, false, CellType::kLstm);
  recur::Rng rng(2);
  for (StepIo io : {StepIo::kCopy, StepIo::kMapped}) {
    CAPTURE(to_string(io));
    PolicyActor actor(spec, 8, cuda_placement(true, io));
    actor.load(init_policy(spec, rng));
    std::vector<float> obs(8 * 5, 0.3f), a(8 * 3), lp(8), v(8);
    std::vector<uint8_t> st(8, 0);
    // The first act and peek run plain and capture their graphs (which allocates).
    actor.act(obs, st, rng, false, a, lp, v);
    actor.peek_values(obs, st, v);
    recur::test::AllocationCounter counter;
    for (int t = 0; t < 50; ++t) {
      actor.act(obs, st, rng, t % 2, a, lp, v);
      actor.peek_values(obs, st, v);
    }
    CHECK(counter.count() == 0);
  }
}

#endif  // RECUR_WITH_CUDA
