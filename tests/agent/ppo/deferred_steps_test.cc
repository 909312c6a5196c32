// The updater's deferred steps (engine.h: begin_steps / step / end_steps, read once per update or
// per epoch) against its per-minibatch flow (compute, decide, apply), on the host engine wrapped
// to defer as the CUDA engine does: the same weights, Adam state, statistics, rng state,
// warnings and errors, bit for bit, for finite updates, skipped non-finite minibatches, a stop
// on one, and the target-KL stop. The CUDA engine's own deferred steps are compared in
// cuda_engine_test.cc (GPU).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "agent/ppo/updater.h"
#include "policy/policy_spec.h"
#include "tests/support/wrapped_host_engine.h"

using namespace recur;

namespace {

struct Outcome {
  agent::UpdateStats stats;
  std::string error;
  policy::TensorMap weights, optimizer;
  Rng::State rng{};
  int runs = 0;
};

// Two updates (the second on `second`) on a fresh updater, deferred or not.
Outcome run(const agent::AlgoConfig& cfg, bool deferred, const agent::Rollout& first,
            const agent::Rollout& second) {
  const policy::PolicySpec spec = test::small_policy_spec();
  Rng init(3);
  auto engine = std::make_unique<test::DeferringEngine>(spec, policy::init_policy(spec, init));
  test::DeferringEngine* raw = engine.get();
  agent::PpoUpdater ppo(cfg, std::move(engine), 7);
  ppo.set_deferred_steps(deferred);
  Outcome out;
  agent::Rollout a = first, b = second;
  try {
    ppo.update(a, 0.25, 100);
    out.stats = ppo.update(b, 0.5, 200);
  } catch (const agent::NonFiniteUpdate& e) {
    out.error = e.what();
  }
  out.weights = ppo.engine().to_tensors();
  out.optimizer = ppo.engine().optimizer_tensors();
  out.rng = ppo.rng().state();
  out.runs = raw->runs;
  return out;
}

void check_same(const Outcome& d, const Outcome& p) {
  CHECK(d.error == p.error);
  CHECK(d.weights == p.weights);
  CHECK(d.optimizer == p.optimizer);
  CHECK(d.rng == p.rng);
  test::check_same_stats(d.stats, p.stats);
  CHECK(d.stats.skipped == p.stats.skipped);
  CHECK(d.stats.epochs_run == p.stats.epochs_run);
}

}  // namespace

TEST_CASE("deferred PPO steps equal the per-minibatch flow bit for bit") {
  const policy::PolicySpec spec = test::small_policy_spec();
  Rng rng(11);
  const agent::Rollout good1 = test::random_rollout(spec, 6, 8, rng);
  const agent::Rollout good2 = test::random_rollout(spec, 6, 8, rng);
  agent::Rollout bad = good2;
  bad.rewards[3 * 8 + 5] = std::numeric_limits<float>::infinity();  // env 5's column only
  agent::AlgoConfig cfg;
  cfg.epochs = 3;
  cfg.num_minibatches = 4;
  cfg.max_grad_norm = 0.05f;  // some steps clip

  SUBCASE("finite updates: one read per update") {
    const Outcome d = run(cfg, true, good1, good2), p = run(cfg, false, good1, good2);
    check_same(d, p);
    CHECK(d.error.empty());
    CHECK(d.stats.minibatches == 12);
    CHECK(d.runs == 2);
    CHECK(p.runs == 0);
  }
  SUBCASE("on_nonfinite: skip") {
    cfg.on_nonfinite = "skip";
    const Outcome d = run(cfg, true, good1, bad), p = run(cfg, false, good1, bad);
    check_same(d, p);
    CHECK(d.stats.skipped == 3);  // env 5's minibatch in each epoch
    CHECK(d.stats.minibatches == 9);
  }
  SUBCASE("on_nonfinite: stop") {
    const Outcome d = run(cfg, true, good1, bad), p = run(cfg, false, good1, bad);
    check_same(d, p);
    CHECK(d.error.find("the update at env step 200 (epoch 1 of 3, minibatch") != std::string::npos);
  }
  SUBCASE("target_kl: one read per epoch, and the early stop at the same epoch") {
    cfg.target_kl = 1e-6f;
    const Outcome d = run(cfg, true, good1, good2), p = run(cfg, false, good1, good2);
    check_same(d, p);
    CHECK(d.stats.epochs_run < cfg.epochs);
    CHECK(d.runs >= 2);
  }
}
