// The whole policy with its core on the GPU against the same policy on the CPU: the learner's
// gradients for one loss over a stored trajectory (relative <= 1e-4 per parameter tensor, FMA
// math) and the actor's log-probs and values along a rollout (<= 1e-5), for discrete/continuous
// actions, shared/separate cores and LSTM/GRU, and recur's own cores (minGRU, the layer-norm LSTM:
// the CUDA step kernels and the fused CUDA sequence executor; 1e-4 for lstm_ln, whose layer norms
// magnify the summation-order rounding of a row's mean where its variance is small). Skipped
// (with a message) without a usable GPU.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "core/rng.h"
#include "policy/devices.h"
#include "policy/policy_actor.h"
#include "policy/policy_learner.h"
#include "tests/support/gpu_skip.h"
#include "tests/support/rel_err.h"

using namespace recur::policy;

namespace {

PolicySpec spec_for(ActionKind kind, bool shared, CellType cell) {
  PolicySpec s;
  s.obs_dim = 5;
  s.action_kind = kind;
  s.action_dim = kind == ActionKind::kDiscrete ? 3 : 2;
  s.encoder = {16};
  s.cell = cell;
  s.hidden = 32;
  s.layers = 2;
  s.shared_core = shared;
  s.actor_gain = 1.0f;
  s.log_std_init = -0.3f;
  return s;
}

using recur::test::rel_err;

const CellType kCells[] = {CellType::kLstm, CellType::kGru, CellType::kMinGru,
                           CellType::kMinGruHighway, CellType::kLstmLn};

double forward_tol(CellType cell) {
  return cell == CellType::kLstmLn ? 1e-4 : 1e-5;
}

Placement cuda(bool graph = true) {
  Placement p;
  p.device = Device::kCuda;
  p.step.use_graph = graph;
  return p;
}

}  // namespace

TEST_CASE("GPU actor gives the CPU actor's log-probs and values") {
  if (!recur::test::gpu_or_skip("GPU actor gives the CPU actor's log-probs and values")) return;
  for (ActionKind kind : {ActionKind::kDiscrete, ActionKind::kContinuous})
    for (bool shared : {true, false})
      for (CellType cell : kCells)
        for (bool graph : {false, true}) {
          CAPTURE(static_cast<int>(kind));
          CAPTURE(shared);
          CAPTURE(to_string(cell));
          CAPTURE(graph);
          const PolicySpec spec = spec_for(kind, shared, cell);
          recur::Rng init(5);
          const TensorMap params = init_policy(spec, init);
          const int B = 7, T = 8;
          PolicyActor cpu(spec, B), gpu(spec, B, cuda(graph));
          cpu.load(params);
          gpu.load(params);
          recur::Rng data(9);
          std::vector<float> s0(static_cast<size_t>(B) * spec.state_size());
          for (auto& v : s0) v = static_cast<float>(data.uniform(-0.8, 0.8));  // non-zero
          cpu.set_states(s0);
          gpu.set_states(s0);
          const int adim = kind == ActionKind::kDiscrete ? 1 : spec.action_dim;
          std::vector<float> obs(static_cast<size_t>(B) * spec.obs_dim);
          std::vector<float> a1(static_cast<size_t>(B) * adim), a2(a1.size());
          std::vector<float> lp1(B), lp2(B), v1(B), v2(B);
          std::vector<uint8_t> st(static_cast<size_t>(B));
          recur::Rng r1(11), r2(11);  // the same random numbers for both samplers
          std::vector<float> all_lp1, all_lp2, all_v1, all_v2;
          for (int t = 0; t < T; ++t) {
            for (auto& o : obs) o = static_cast<float>(data.uniform(-2, 2));
            for (int b = 0; b < B; ++b) st[static_cast<size_t>(b)] = (t + b) % 5 == 0;
            // Deterministic actions keep both actors on the same action even where a sampled
            // one could flip on a 1e-7 difference; log-probs are then compared for that action.
            cpu.act(obs, st, r1, true, a1, lp1, v1);
            gpu.act(obs, st, r2, true, a2, lp2, v2);
            if (kind == ActionKind::kDiscrete) CHECK(a1 == a2);
            all_lp1.insert(all_lp1.end(), lp1.begin(), lp1.end());
            all_lp2.insert(all_lp2.end(), lp2.begin(), lp2.end());
            all_v1.insert(all_v1.end(), v1.begin(), v1.end());
            all_v2.insert(all_v2.end(), v2.begin(), v2.end());
          }
          const double tol = forward_tol(cell);
          CHECK(rel_err(all_lp2, all_lp1) < tol);
          CHECK(rel_err(all_v2, all_v1) < tol);
          std::vector<float> st1(s0.size()), st2(s0.size());
          cpu.get_states(st1);
          gpu.get_states(st2);
          CHECK(rel_err(st2, st1) < tol);
        }
}

TEST_CASE("GPU learner gives the CPU learner's gradients") {
  if (!recur::test::gpu_or_skip("GPU learner gives the CPU learner's gradients")) return;
  for (ActionKind kind : {ActionKind::kDiscrete, ActionKind::kContinuous})
    for (bool shared : {true, false})
      for (CellType cell : kCells) {
        CAPTURE(static_cast<int>(kind));
        CAPTURE(shared);
        CAPTURE(to_string(cell));
        const PolicySpec spec = spec_for(kind, shared, cell);
        recur::Rng rng(21);
        const TensorMap params = init_policy(spec, rng);
        const int T = 16, B = 6;
        const size_t tb = static_cast<size_t>(T) * B;
        const int adim = kind == ActionKind::kDiscrete ? 1 : spec.action_dim;
        std::vector<float> obs(tb * spec.obs_dim), actions(tb * adim);
        std::vector<float> s0(static_cast<size_t>(B) * spec.state_size());
        std::vector<uint8_t> starts(tb);
        for (auto& v : obs) v = static_cast<float>(rng.uniform(-2, 2));
        for (auto& v : actions)
          v = kind == ActionKind::kDiscrete ? static_cast<float>(rng.uniform_int(3))
                                            : static_cast<float>(rng.uniform(-1, 1));
        for (auto& v : s0) v = static_cast<float>(rng.uniform(-0.8, 0.8));
        for (auto& s : starts) s = rng.uniform() < 0.1 ? 1 : 0;
        std::vector<float> ca(tb), cb(tb), cc(tb);
        for (size_t i = 0; i < tb; ++i) {
          ca[i] = static_cast<float>(rng.uniform(-1, 1));
          cb[i] = static_cast<float>(rng.uniform(-1, 1));
          cc[i] = static_cast<float>(rng.uniform(-1, 1));
        }
        TensorMap grads[2];
        std::vector<float> lps[2];
        for (int d = 0; d < 2; ++d) {
          PolicyLearner learner(spec, d == 0 ? Placement{} : cuda());
          learner.load(params);
          std::vector<float> lp(tb), ent(tb), v(tb);
          learner.evaluate(T, B, obs, actions, starts, s0, lp, ent, v);
          learner.zero_gradients();
          learner.backward(ca, cb, cc);
          grads[d] = learner.gradient_tensors();
          lps[d] = lp;
        }
        CHECK(rel_err(lps[1], lps[0]) < forward_tol(cell));
        REQUIRE(grads[0].size() == grads[1].size());
        for (const auto& [name, g] : grads[0]) {
          CAPTURE(name);
          REQUIRE(grads[1].count(name));
          CHECK(rel_err(grads[1].at(name).data, g.data) < 1e-4);
        }
      }
}
