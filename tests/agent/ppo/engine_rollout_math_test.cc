// The updater with an engine that computes the rollout math itself (engine.h: begin_update_gae,
// anchor_to_proximal, end_update; the CUDA engine does GAE and the async anchor on the device)
// against the updater's host flow (compute_gae and its own anchor before begin_update): the same
// weights, Adam state, statistics (explained variance included), rng state, and the rollout's
// advantages, returns and log-probs after the update, bit for bit. The engine here is the host
// engine wrapped to run the device kernels' CPU references (kernels/gae_math.h,
// kernels/proximal_anchor.h) on its own copy of the rollout, as a device holds its own; the CUDA
// engine's own rollout math is compared in cuda_engine_test.cc (GPU).
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "agent/ppo/engine.h"
#include "agent/ppo/updater.h"
#include "kernels/gae_math.h"
#include "kernels/proximal_anchor.h"
#include "policy/policy_spec.h"
#include "tests/support/wrapped_host_engine.h"

using namespace recur;

namespace {

// A rollout before GAE: terminations, truncations with bootstrap values, episode starts after
// them, non-zero initial states and values after the last step; stored chunk states for
// algo.bptt_steps = T / 2.
agent::Rollout make_rollout(const policy::PolicySpec& spec, int T, int N, Rng& rng) {
  agent::Rollout r = test::random_rollout(spec, T, N, rng, T / 2);
  for (auto& v : r.last_values) v = static_cast<float>(rng.uniform(-0.5, 0.5));
  for (auto& v : r.initial_state) v = static_cast<float>(rng.uniform(-0.3, 0.3));
  for (auto& v : r.chunk_states) v = static_cast<float>(rng.uniform(-0.3, 0.3));
  for (size_t i = 0; i < r.terminated.size(); ++i) {
    const double u = rng.uniform();
    if (u < 0.08) r.terminated[i] = 1;
    if (u >= 0.08 && u < 0.14) {
      r.truncated[i] = 1;
      r.bootstrap_values[i] = static_cast<float>(rng.uniform(-0.5, 0.5));
    }
    if ((r.terminated[i] || r.truncated[i]) && i + static_cast<size_t>(N) < r.episode_start.size())
      r.episode_start[i + static_cast<size_t>(N)] = 1;
  }
  return r;
}

// The host engine that does the rollout math itself, on its own copy of the rollout.
class RolloutMathEngine : public test::WrappedHostEngine {
 public:
  using WrappedHostEngine::WrappedHostEngine;
  void begin_update(const agent::Rollout& r) override {
    ++plain_updates;
    inner().begin_update(r);
  }
  void log_probs(std::span<const int> envs, std::span<float> out,
                 std::span<float> values) override {
    ++host_anchor_chunks;
    inner().log_probs(envs, out, values);
  }

  bool computes_rollout_math() const override { return true; }
  void begin_update_gae(const agent::Rollout& r, float gamma, float lambda) override {
    ++gae_updates;
    own_ = r;
    gamma_ = gamma, lambda_ = lambda, values_replaced_ = false;
    // What a device holds: the uploaded arrays, GAE's outputs not among them.
    std::fill(own_.advantages.begin(), own_.advantages.end(), -1e30f);
    std::fill(own_.returns.begin(), own_.returns.end(), -1e30f);
    gae(gamma, lambda);
    inner().begin_update(own_);
  }
  void anchor_to_proximal(int per_mb, bool values) override {
    ++engine_anchors;
    const int T = own_.T, N = own_.N;
    std::vector<int> cols(static_cast<size_t>(per_mb));
    std::vector<int32_t> rows(static_cast<size_t>(T) * per_mb);
    std::vector<float> prox(rows.size()), critic(values ? rows.size() : 0);
    // With values: the rollout-wide proximal log-probs, unset rows marked to show if any stayed.
    std::vector<float> all_prox(values ? own_.log_probs.size() : 0, -1e30f);
    for (int first = 0; first < N; first += per_mb) {
      std::iota(cols.begin(), cols.end(), first);
      inner().log_probs(cols, prox, critic);  // (T, per_mb), time-major
      for (int t = 0; t < T; ++t)
        for (int j = 0; j < per_mb; ++j)
          rows[static_cast<size_t>(t) * per_mb + j] = t * N + first + j;
      const int m = static_cast<int>(rows.size());
      if (values)
        kernels::proximal_scatter_reference(rows.data(), prox.data(), critic.data(), m,
                                            all_prox.data(), own_.values.data());
      else
        kernels::proximal_anchor_reference(rows.data(), prox.data(), m, own_.log_probs.data(),
                                           own_.advantages.data());
    }
    if (!values) return;
    // GAE again on the critic's values, then the weights over every row (the device's order).
    std::fill(own_.advantages.begin(), own_.advantages.end(), -1e30f);
    std::fill(own_.returns.begin(), own_.returns.end(), -1e30f);
    gae(gamma_, lambda_);
    kernels::proximal_anchor_reference(nullptr, all_prox.data(), static_cast<int>(all_prox.size()),
                                       own_.log_probs.data(), own_.advantages.data());
    values_replaced_ = true;
  }
  void end_update(agent::Rollout& r) override {
    ++read_backs;
    r.advantages = own_.advantages;
    r.returns = own_.returns;
    r.log_probs = own_.log_probs;
    if (values_replaced_) r.values = own_.values;
  }

  int plain_updates = 0, gae_updates = 0, engine_anchors = 0, host_anchor_chunks = 0;
  int read_backs = 0;

 private:
  void gae(float gamma, float lambda) {
    kernels::GaeInputs in;
    in.rewards = own_.rewards.data();
    in.values = own_.values.data();
    in.terminated = own_.terminated.data();
    in.truncated = own_.truncated.data();
    in.bootstrap_values = own_.bootstrap_values.data();
    in.last_values = own_.last_values.data();
    kernels::gae_reference(own_.T, own_.N, gamma, lambda, in, own_.advantages.data(),
                           own_.returns.data());
  }

  agent::Rollout own_;
  float gamma_ = 0, lambda_ = 0;
  bool values_replaced_ = false;
};

struct Outcome {
  agent::UpdateStats stats;
  policy::TensorMap weights, optimizer;
  Rng::State rng{};
  std::vector<agent::Rollout> after;  // the rollouts as the updates left them
  int plain_updates = 0, gae_updates = 0, engine_anchors = 0, host_anchor_chunks = 0;
  int read_backs = 0;
};

// Two updates on a fresh updater, the engine's rollout math on or off.
Outcome run(const agent::AlgoConfig& cfg, bool engine_math, int policy_lag,
            const std::vector<agent::Rollout>& rollouts) {
  const policy::PolicySpec spec = test::small_policy_spec();
  Rng init(3);
  auto engine = std::make_unique<RolloutMathEngine>(spec, policy::init_policy(spec, init));
  RolloutMathEngine* raw = engine.get();
  agent::PpoUpdater ppo(cfg, std::move(engine), 7);
  ppo.set_engine_rollout_math(engine_math);
  Outcome out;
  for (size_t i = 0; i < rollouts.size(); ++i) {
    out.after.push_back(rollouts[i]);
    out.stats = ppo.update(out.after.back(), 0.25 * static_cast<double>(i + 1),
                           100 * static_cast<int64_t>(i + 1), policy_lag);
  }
  out.weights = ppo.engine().to_tensors();
  out.optimizer = ppo.engine().optimizer_tensors();
  out.rng = ppo.rng().state();
  out.plain_updates = raw->plain_updates, out.gae_updates = raw->gae_updates;
  out.engine_anchors = raw->engine_anchors, out.host_anchor_chunks = raw->host_anchor_chunks;
  out.read_backs = raw->read_backs;
  return out;
}

void check_same(const Outcome& e, const Outcome& h) {
  CHECK(e.weights == h.weights);
  CHECK(e.optimizer == h.optimizer);
  CHECK(e.rng == h.rng);
  test::check_same_stats(e.stats, h.stats);
  CHECK(e.stats.explained_variance == h.stats.explained_variance);
  REQUIRE(e.after.size() == h.after.size());
  for (size_t i = 0; i < e.after.size(); ++i) {
    CAPTURE(i);
    CHECK(e.after[i].advantages == h.after[i].advantages);
    CHECK(e.after[i].returns == h.after[i].returns);
    CHECK(e.after[i].log_probs == h.after[i].log_probs);
    CHECK(e.after[i].values == h.after[i].values);
  }
}

}  // namespace

TEST_CASE("an engine's own GAE and async anchor give the host flow's update bit for bit") {
  const policy::PolicySpec spec = test::small_policy_spec();
  Rng rng(11);
  const std::vector<agent::Rollout> rollouts = {make_rollout(spec, 6, 8, rng),
                                                make_rollout(spec, 6, 8, rng)};
  agent::AlgoConfig cfg;
  cfg.epochs = 2;
  cfg.num_minibatches = 4;
  cfg.gamma = 0.97f;
  cfg.gae_lambda = 0.9f;

  SUBCASE("sync: GAE where the learner runs, read back once per update") {
    const Outcome e = run(cfg, true, 0, rollouts), h = run(cfg, false, 0, rollouts);
    check_same(e, h);
    CHECK(e.gae_updates == 2);
    CHECK(e.plain_updates == 0);
    CHECK(e.read_backs == 2);
    CHECK(h.gae_updates == 0);
    CHECK(h.read_backs == 0);
    // The rollout really went through GAE: returns = advantages + values.
    CHECK(e.after[0].returns[5] ==
          doctest::Approx(e.after[0].advantages[5] + rollouts[0].values[5]));
  }
  SUBCASE("async with the anchor: the anchor where the learner runs too") {
    cfg.async_anchor_values = false;  // the behaviour critic's values (next case: the learner's)
    const Outcome e = run(cfg, true, 1, rollouts), h = run(cfg, false, 1, rollouts);
    check_same(e, h);
    CHECK(e.engine_anchors == 2);
    CHECK(e.host_anchor_chunks == 0);  // the updater asked for no log-probs ...
    CHECK(h.engine_anchors == 0);
    CHECK(h.host_anchor_chunks == 8);  // ... where its own anchor reads 4 chunks per update
    CHECK(h.plain_updates == 4);       // the host flow uploads again after its anchor
    // The anchor changed the log-probs (the update's proximal policy replaced the behaviour's).
    CHECK(e.after[1].log_probs != rollouts[1].log_probs);
  }
  SUBCASE("async with the anchor's critic values: GAE again where the learner runs") {
    const Outcome e = run(cfg, true, 1, rollouts), h = run(cfg, false, 1, rollouts);
    check_same(e, h);
    CHECK(e.gae_updates == 2);
    CHECK(e.engine_anchors == 2);
    CHECK(e.host_anchor_chunks == 0);
    CHECK(e.read_backs == 2);
    CHECK(h.host_anchor_chunks == 8);
    CHECK(h.plain_updates == 4);
    // The first update's values are the learner's critic at its start: the initial weights.
    const policy::PolicySpec s = test::small_policy_spec();
    Rng init(3);  // run()'s
    auto critic = agent::make_host_ppo_engine(s, policy::Placement{}, 1e-5f);
    critic->load(policy::init_policy(s, init));
    critic->begin_update(rollouts[0]);
    const int T = rollouts[0].T, N = rollouts[0].N;
    std::vector<int> all(static_cast<size_t>(N));
    std::iota(all.begin(), all.end(), 0);
    std::vector<float> logp(static_cast<size_t>(T) * N), values(logp.size());
    critic->log_probs(all, logp, values);
    REQUIRE(values.size() == e.after[0].values.size());
    for (size_t i = 0; i < values.size(); ++i)
      REQUIRE(e.after[0].values[i] == doctest::Approx(values[i]).epsilon(1e-5));
    CHECK(e.after[0].values != rollouts[0].values);
    CHECK(
        std::equal(logp.begin(), logp.end(), e.after[0].log_probs.begin()));  // proximal, as before
    // Returns are GAE's of the new values: return = advantage + value where the anchor's weight
    // left the advantage alone (it scales advantages only).
    int unweighted = 0;
    for (size_t i = 0; i < values.size(); ++i) {
      if (kernels::anchor_weight(logp[i], rollouts[0].log_probs[i]) != 1.0f) continue;
      ++unweighted;
      CHECK(e.after[0].returns[i] ==
            doctest::Approx(e.after[0].advantages[i] + e.after[0].values[i]).epsilon(1e-5));
    }
    CHECK(unweighted > 0);
  }
  SUBCASE("async with algo.async_anchor off: no anchor either way") {
    cfg.async_anchor = false;
    const Outcome e = run(cfg, true, 1, rollouts), h = run(cfg, false, 1, rollouts);
    check_same(e, h);
    CHECK(e.engine_anchors == 0);
    CHECK(e.after[1].log_probs == rollouts[1].log_probs);
  }
  SUBCASE("algo.bptt_steps: the cut needs host advantages, so the host computes GAE") {
    cfg.bptt_steps = 3;
    const Outcome e = run(cfg, true, 1, rollouts), h = run(cfg, false, 1, rollouts);
    check_same(e, h);
    CHECK(e.gae_updates == 0);
    CHECK(e.engine_anchors == 0);
    CHECK(e.read_backs == 0);
  }
}
