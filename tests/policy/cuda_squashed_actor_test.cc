// The CUDA policy actor with a tanh-squashed head (kernels/action_heads.h,
// launch_tanh_gaussian_head / launch_tanh_head) against the CPU actor: deterministic actions,
// log-probs and values within 1e-5 relative (the tolerance of cuda_policy_actor_test.cc, for the
// same reasons: cuBLAS's order of summation, FMA contraction, CUDA's tanhf/expf); sampled
// actions inside the Box, reproducible from the seed, and (SAC's head) their log-probs those of
// the draw that the action implies. The GPU's draws are not the CPU Rng's (action_heads.h), so
// sampled actions are compared in their own terms, not value by value. Every case skips itself
// (with a message) without a usable GPU.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "policy/policy_actor.h"
#include "policy/squashed_action.h"
#include "tests/support/gpu_skip.h"
#include "tests/support/rel_err.h"

using namespace recur::policy;

namespace {

PolicySpec squashed_spec(Squash squash) {
  PolicySpec s;
  s.obs_dim = 5;
  s.action_kind = ActionKind::kContinuous;
  s.action_dim = 3;
  s.encoder = {16};
  s.head = {8};
  s.hidden = 32;
  s.layers = 2;
  s.shared_core = false;
  s.actor_gain = 1.0f;
  s.squash = squash;
  s.action_low = {-2.0f, 0.1f, -1.0f};
  s.action_high = {2.0f, 0.35f, 3.0f};
  s.exploration_noise = 0.3f;
  return s;
}

Placement cuda_placement(bool graph) {
  Placement p;
  p.device = Device::kCuda;
  p.step.use_graph = graph;
  return p;
}

}  // namespace

#ifndef RECUR_WITH_CUDA

TEST_CASE("squashed policy actor on cuda fails clearly in a build without CUDA") {
  CHECK_THROWS_AS(PolicyActor(squashed_spec(Squash::kTanh), 2, cuda_placement(true)), recur::Error);
}

#else

using recur::test::rel_err;

TEST_CASE("cuda squashed actor matches the cpu actor deterministically") {
  if (!recur::test::gpu_or_skip("cuda squashed actor matches the cpu actor deterministically"))
    return;
  for (Squash squash : {Squash::kTanhGaussian, Squash::kTanh})
    for (bool graph : {false, true}) {
      CAPTURE(to_string(squash));
      CAPTURE(graph);
      const PolicySpec spec = squashed_spec(squash);
      recur::Rng init(5);
      const TensorMap params = init_policy(spec, init);
      const int B = 7, T = 10, d = spec.action_dim;
      PolicyActor cpu(spec, B), gpu(spec, B, cuda_placement(graph));
      cpu.load(params);
      gpu.load(params);
      std::vector<float> obs(static_cast<size_t>(B) * spec.obs_dim), a1(B * d), a2(B * d), lp1(B),
          lp2(B), v1(B), v2(B);
      std::vector<uint8_t> st(B);
      std::vector<float> all_a1, all_a2, all_lp1, all_lp2, all_v1, all_v2;
      recur::Rng data(9), r1(11), r2(11);
      for (int t = 0; t < T; ++t) {
        for (auto& o : obs) o = static_cast<float>(data.uniform(-2, 2));
        for (int b = 0; b < B; ++b) st[static_cast<size_t>(b)] = (t + b) % 5 == 0;
        cpu.act(obs, st, r1, true, a1, lp1, v1);
        gpu.act(obs, st, r2, true, a2, lp2, v2);
        all_a1.insert(all_a1.end(), a1.begin(), a1.end());
        all_a2.insert(all_a2.end(), a2.begin(), a2.end());
        all_lp1.insert(all_lp1.end(), lp1.begin(), lp1.end());
        all_lp2.insert(all_lp2.end(), lp2.begin(), lp2.end());
        all_v1.insert(all_v1.end(), v1.begin(), v1.end());
        all_v2.insert(all_v2.end(), v2.begin(), v2.end());
      }
      CHECK(rel_err(all_a2, all_a1) < 1e-5);
      if (squash == Squash::kTanhGaussian) CHECK(rel_err(all_lp2, all_lp1) < 1e-5);
      if (squash == Squash::kTanh) CHECK(all_lp2 == all_lp1);  // zeros
      CHECK(rel_err(all_v2, all_v1) < 1e-5);
    }
}

TEST_CASE("cuda squashed actor samples inside the Box, reproducibly, with their log-probs") {
  if (!recur::test::gpu_or_skip("cuda squashed actor samples inside the Box")) return;
  for (Squash squash : {Squash::kTanhGaussian, Squash::kTanh}) {
    CAPTURE(to_string(squash));
    const PolicySpec spec = squashed_spec(squash);
    // The same network unsquashed with a head as wide: its deterministic action is the raw head.
    PolicySpec twin = spec;
    twin.squash = Squash::kNone;
    twin.action_low.clear();
    twin.action_high.clear();
    twin.action_dim = squash_head_width(squash, spec.action_dim);
    recur::Rng init(6);
    const TensorMap params = init_policy(spec, init);
    TensorMap twin_params = params;
    twin_params["actor.log_std"] =
        Tensor({twin.action_dim}, std::vector<float>(twin.action_dim, 0.0f));
    const int B = 64, d = spec.action_dim, w = twin.action_dim;
    PolicyActor gpu(spec, B, cuda_placement(true)), again(spec, B, cuda_placement(false)),
        raw(twin, B);
    gpu.load(params);
    again.load(params);
    raw.load(twin_params);
    std::vector<float> obs(static_cast<size_t>(B) * spec.obs_dim), a(B * d), a_again(B * d), lp(B),
        lp_again(B), v(B), head(B * w), raw_lp(B);
    std::vector<uint8_t> st(B, 1);
    recur::Rng data(7), r1(8), r2(8), unused(0);
    int checked = 0;
    for (int t = 0; t < 5; ++t) {
      for (auto& o : obs) o = static_cast<float>(data.uniform(-2, 2));
      gpu.act(obs, st, r1, false, a, lp, v);
      again.act(obs, st, r2, false, a_again, lp_again, v);
      raw.act(obs, st, unused, true, head, raw_lp, v);
      CHECK(a == a_again);  // the seed decides: graph or not
      CHECK(lp == lp_again);
      for (int b = 0; b < B; ++b) {
        double logp = 0;
        bool exact = true;
        for (int j = 0; j < d; ++j) {
          const float x = a[static_cast<size_t>(b * d + j)];
          REQUIRE(x >= spec.action_low[static_cast<size_t>(j)]);
          REQUIRE(x <= spec.action_high[static_cast<size_t>(j)]);
          if (squash != Squash::kTanhGaussian) continue;
          // The draw the action implies: eps = (atanh(a) - mean) / std; exact enough away from
          // saturation and for a std not too small (|a| < 0.99 and std > 0.05: float32's a pins
          // u to ~5e-6, so eps to ~1e-4).
          const double an = from_env_action<double>(x, spec.action_low[static_cast<size_t>(j)],
                                                    spec.action_high[static_cast<size_t>(j)]);
          const double mean = head[static_cast<size_t>(b * w + j)];
          const double log_std = squash_log_std<double>(head[static_cast<size_t>(b * w + d + j)]);
          const double eps = (std::atanh(an) - mean) / std::exp(log_std);
          exact = exact && std::abs(an) < 0.99 && std::exp(log_std) > 0.05;
          logp += tanh_gaussian_log_prob_term(eps, log_std, an);
        }
        if (squash == Squash::kTanh) CHECK(lp[static_cast<size_t>(b)] == 0.0f);
        if (squash == Squash::kTanhGaussian && exact) {
          CHECK(std::abs(lp[static_cast<size_t>(b)] - logp) < 5e-3 * (1 + std::abs(logp)));
          ++checked;
        }
      }
      st.assign(B, 0);
    }
    if (squash == Squash::kTanhGaussian) CHECK(checked > 30);
  }
}

#endif
