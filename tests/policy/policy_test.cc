// The whole policy: the actor (step executor, one timestep at a time) and the learner (sequence
// executor over the stored trajectory) compute the same log-probs and values; the learner's
// backward through heads, core and encoder matches finite differences; parameters round trip.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "policy/policy_actor.h"
#include "policy/policy_learner.h"
#include "tests/support/alloc_counter.h"
#include "tests/support/rel_err.h"
#include "tests/support/skip.h"

using namespace recur::policy;

namespace {

PolicySpec small_spec(ActionKind kind, bool shared, CellType cell) {
  PolicySpec s;
  s.obs_dim = 3;
  s.action_kind = kind;
  s.action_dim = kind == ActionKind::kDiscrete ? 3 : 2;
  s.encoder = {5};
  s.head = {6};  // hidden layers in both heads
  s.cell = cell;
  s.hidden = 4;
  s.layers = 2;
  s.shared_core = shared;
  s.actor_gain = 1.0f;  // not the near-uniform 0.01: the test wants sizeable log-prob gradients
  s.log_std_init = -0.3f;
  return s;
}

struct Rollout {
  int T = 6, B = 3;
  std::vector<float> nobs, actions, logp, values, state0;
  std::vector<uint8_t> starts;
};

Rollout act_rollout(PolicyActor& actor, recur::Rng& rng, bool deterministic) {
  Rollout r;
  const PolicySpec& s = actor.spec();
  const int adim = s.action_kind == ActionKind::kDiscrete ? 1 : s.action_dim;
  r.state0.resize(static_cast<size_t>(r.B) * s.state_size());
  for (auto& v : r.state0) v = static_cast<float>(rng.uniform(-0.8, 0.8));  // non-zero
  actor.set_states(r.state0);
  std::vector<float> obs(static_cast<size_t>(r.B) * s.obs_dim), a(static_cast<size_t>(r.B) * adim),
      lp(static_cast<size_t>(r.B)), v(static_cast<size_t>(r.B));
  std::vector<uint8_t> st(static_cast<size_t>(r.B));
  for (int t = 0; t < r.T; ++t) {
    for (auto& o : obs) o = static_cast<float>(rng.uniform(-2, 2));
    for (int b = 0; b < r.B; ++b)
      st[static_cast<size_t>(b)] = (t == 3 && b == 1) || (t == 0 && b == 2);
    actor.act(obs, st, rng, deterministic, a, lp, v);
    r.nobs.insert(r.nobs.end(), actor.normalized_obs().begin(), actor.normalized_obs().end());
    r.actions.insert(r.actions.end(), a.begin(), a.end());
    r.logp.insert(r.logp.end(), lp.begin(), lp.end());
    r.values.insert(r.values.end(), v.begin(), v.end());
    r.starts.insert(r.starts.end(), st.begin(), st.end());
  }
  return r;
}

using recur::test::rel_err;

}  // namespace

TEST_CASE("actor and learner compute the same log-probs and values") {
  for (ActionKind kind : {ActionKind::kDiscrete, ActionKind::kContinuous}) {
    for (bool shared : {true, false}) {
      for (CellType cell : {CellType::kLstm, CellType::kGru}) {
        CAPTURE(static_cast<int>(kind));
        CAPTURE(shared);
        CAPTURE(to_string(cell));
        const PolicySpec spec = small_spec(kind, shared, cell);
        recur::Rng rng(3);
        const TensorMap params = init_policy(spec, rng);
        PolicyActor actor(spec, 3);
        actor.load(params);
        const Rollout r = act_rollout(actor, rng, false);
        PolicyLearner learner(spec);
        learner.load(params);
        const size_t tb = static_cast<size_t>(r.T) * r.B;
        std::vector<float> lp(tb), ent(tb), v(tb);
        learner.evaluate(r.T, r.B, r.nobs, r.actions, r.starts, r.state0, lp, ent, v);
        for (size_t i = 0; i < tb; ++i) {
          CHECK(lp[i] == doctest::Approx(r.logp[i]).epsilon(1e-5).scale(1));
          CHECK(v[i] == doctest::Approx(r.values[i]).epsilon(1e-5).scale(1));
          CHECK(std::isfinite(ent[i]));
        }
      }
    }
  }
}

TEST_CASE("learner backward matches finite differences through heads core and encoder") {
  for (ActionKind kind : {ActionKind::kDiscrete, ActionKind::kContinuous}) {
    for (bool shared : {true, false}) {
      CAPTURE(static_cast<int>(kind));
      CAPTURE(shared);
      const PolicySpec spec = small_spec(kind, shared, CellType::kLstm);
      recur::Rng rng(8);
      const TensorMap params = init_policy(spec, rng);
      PolicyActor actor(spec, 3);
      actor.load(params);
      const Rollout r = act_rollout(actor, rng, false);
      PolicyLearner learner(spec);
      learner.load(params);
      const size_t tb = static_cast<size_t>(r.T) * r.B;
      std::vector<float> ca(tb), cb(tb), cc(tb);
      for (size_t i = 0; i < tb; ++i) {
        ca[i] = static_cast<float>(rng.uniform(-1, 1));
        cb[i] = static_cast<float>(rng.uniform(-1, 1));
        cc[i] = static_cast<float>(rng.uniform(-1, 1));
      }
      std::vector<float> lp(tb), ent(tb), v(tb);
      // Loss = sum(ca logp + cb entropy + cc value), accumulated in double.
      auto loss = [&] {
        learner.evaluate(r.T, r.B, r.nobs, r.actions, r.starts, r.state0, lp, ent, v);
        double l = 0;
        for (size_t i = 0; i < tb; ++i)
          l += double{ca[i]} * lp[i] + double{cb[i]} * ent[i] + double{cc[i]} * v[i];
        return l;
      };
      loss();
      learner.zero_gradients();
      learner.backward(ca, cb, cc);
      // Central differences in float32 with eps 1e-2: each derivative carries ~1e-4 of rounding
      // and ~1e-4 of truncation error, so compare norms per group (a wiring error, e.g. a lost
      // critic path or a swapped tower, is an O(1) error there).
      for (auto& g : learner.parameter_groups()) {
        CAPTURE(g.name);
        std::vector<double> analytic, numeric;
        const size_t stride = std::max<size_t>(1, g.values.size() / 40);
        for (size_t i = 0; i < g.values.size(); i += stride) {
          const float keep = g.values[i];
          g.values[i] = keep + 1e-2f;
          const double lp_ = loss();
          g.values[i] = keep - 1e-2f;
          const double lm_ = loss();
          g.values[i] = keep;
          numeric.push_back((lp_ - lm_) / 2e-2);
          analytic.push_back(g.grads[i]);
        }
        CHECK(rel_err(analytic, numeric) < 2e-2);
      }
    }
  }
}

TEST_CASE("policy parameters and spec round trip") {
  const PolicySpec spec = small_spec(ActionKind::kContinuous, false, CellType::kGru);
  recur::Rng rng(1);
  TensorMap params = init_policy(spec, rng);
  CHECK(params.count("critic_core.weight_hh_l1") == 1);
  CHECK(params.count("encoder.0.weight") == 1);
  CHECK(params.at("actor.log_std").data == std::vector<float>(2, -0.3f));
  PolicyLearner learner(spec);
  learner.load(params);
  TensorMap back = learner.to_tensors();
  for (const auto& [name, t] : back) CHECK(params.at(name) == t);
  CHECK(PolicySpec::from_metadata(spec.to_metadata()) == spec);
  auto meta = spec.to_metadata();
  meta.erase("core.hidden");
  CHECK_THROWS_AS(PolicySpec::from_metadata(meta), recur::Error);
}

TEST_CASE("policy.init pytorch: nn.Linear's bounds, output layers scaled by the gains, metadata") {
  PolicySpec spec = small_spec(ActionKind::kContinuous, false, CellType::kLstm);
  spec.head = {40};
  spec.actor_gain = 0.5f;
  spec.critic_gain = 1.0f;
  spec.init = InitScheme::kPyTorch;
  recur::Rng rng(3);
  const TensorMap p = init_policy(spec, rng);
  // Every weight and bias of a layer with fan-in n lies in [-g/sqrt(n), g/sqrt(n)], g the output
  // gain on the last layer and 1 elsewhere, and fills most of it (not orthogonal, not zero).
  auto check_layer = [&](const std::string& name, int fan_in, float gain) {
    const double bound = gain / std::sqrt(static_cast<double>(fan_in));
    for (const std::string part : {".weight", ".bias"}) {
      const auto& v = p.at(name + part).data;
      double lo = 0, hi = 0;
      for (const float x : v) {
        CHECK(std::abs(x) <= bound * (1 + 1e-6));
        lo = std::min(lo, static_cast<double>(x));
        hi = std::max(hi, static_cast<double>(x));
      }
      if (v.size() >= 16) CHECK(hi - lo > bound);  // spread over the interval
    }
  };
  check_layer("encoder.0", spec.obs_dim, 1.0f);
  check_layer("actor.0", spec.hidden, 1.0f);
  check_layer("actor.2", 40, 0.5f);  // nn.Sequential names: Linear, activation, Linear
  check_layer("critic.2", 40, 1.0f);
  CHECK(spec.to_metadata().at("policy.init") == "pytorch");
  CHECK(PolicySpec::from_metadata(spec.to_metadata()) == spec);

  // The default writes no key (older checkpoints stay byte-identical) and zeroes the biases.
  PolicySpec ortho = spec;
  ortho.init = InitScheme::kOrthogonal;
  CHECK(ortho.to_metadata().count("policy.init") == 0);
  CHECK(PolicySpec::from_metadata(ortho.to_metadata()).init == InitScheme::kOrthogonal);
  recur::Rng rng2(3);
  const TensorMap q = init_policy(ortho, rng2);
  for (const float b : q.at("encoder.0.bias").data) CHECK(b == 0.0f);

  auto meta = spec.to_metadata();
  meta["policy.init"] = "xavier";
  CHECK_THROWS_WITH_AS(PolicySpec::from_metadata(meta),
                       doctest::Contains("'policy.init': unknown initializer 'xavier'"),
                       recur::Error);
}

TEST_CASE("acting allocates nothing after construction") {
  if (!recur::test::AllocationCounter::available()) {
    recur::test::skip("allocation counting is off in sanitizer builds");
    return;
  }
  for (ActionKind kind : {ActionKind::kDiscrete, ActionKind::kContinuous}) {
    const PolicySpec spec = small_spec(kind, false, CellType::kLstm);
    recur::Rng rng(2);
    PolicyActor actor(spec, 8);
    actor.load(init_policy(spec, rng));
    std::vector<float> obs(8 * 3, 0.3f), a(8 * 2), lp(8), v(8);
    std::vector<uint8_t> st(8, 0);
    const size_t adim = kind == ActionKind::kDiscrete ? 1 : 2;
    actor.act(obs, st, rng, false, std::span(a).first(8 * adim), lp, v);
    recur::test::AllocationCounter counter;
    for (int t = 0; t < 50; ++t)
      actor.act(obs, st, rng, t % 2, std::span(a).first(8 * adim), lp, v);
    CHECK(counter.count() == 0);
  }
}

TEST_CASE("learner with two threads gives bitwise the one-thread outputs and gradients") {
  // The actor and critic towers share no data, so running them on two threads may change
  // nothing: every output and gradient must be identical to the last bit.
  for (ActionKind kind : {ActionKind::kDiscrete, ActionKind::kContinuous}) {
    CAPTURE(static_cast<int>(kind));
    const PolicySpec spec = small_spec(kind, false, CellType::kLstm);
    recur::Rng rng(21);
    const TensorMap params = init_policy(spec, rng);
    PolicyActor actor(spec, 3);
    actor.load(params);
    const Rollout r = act_rollout(actor, rng, false);
    const size_t tb = static_cast<size_t>(r.T) * r.B;
    std::vector<float> d(tb);
    for (auto& x : d) x = static_cast<float>(rng.uniform(-1, 1));
    std::vector<float> out[2][3];
    std::vector<std::vector<float>> grads[2];
    for (int threads : {1, 2}) {
      PolicyLearner learner(spec, {}, threads);
      learner.load(params);
      auto& o = out[threads - 1];
      for (auto& v : o) v.assign(tb, 0.0f);
      for (int pass = 0; pass < 2; ++pass) {  // twice: the pool is reused
        learner.evaluate(r.T, r.B, r.nobs, r.actions, r.starts, r.state0, o[0], o[1], o[2]);
        learner.backward(d, d, d);
      }
      for (const auto& g : learner.parameter_groups())
        grads[threads - 1].emplace_back(g.grads.begin(), g.grads.end());
    }
    for (int k = 0; k < 3; ++k) CHECK(out[0][k] == out[1][k]);
    REQUIRE(grads[0].size() == grads[1].size());
    for (size_t i = 0; i < grads[0].size(); ++i) CHECK(grads[0][i] == grads[1][i]);
  }
}
