// PPO's guard against non-finite updates: by default a NaN in the loss or gradient stops the update
// with an error naming it (weights untouched); algo.on_nonfinite: skip skips the minibatch and
// enough of them in a row stop the run; a step that overflows a weight stops it too.
#include "agent/ppo/updater.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <memory>

#include "core/error.h"
#include "policy/devices.h"
#include "policy/policy_spec.h"
#include "tests/support/wrapped_host_engine.h"

using namespace recur;

namespace {
agent::Rollout make_rollout(const policy::PolicySpec& spec, int T, int N, Rng& rng) {
  agent::Rollout r;
  r.resize(T, N, spec.obs_dim, 1, spec.state_size());
  for (auto& v : r.obs) v = static_cast<float>(rng.uniform(-1, 1));
  for (auto& v : r.actions) v = static_cast<float>(rng.uniform_int(2));
  for (auto& v : r.log_probs) v = -0.69f;
  for (auto& v : r.rewards) v = 1.0f;
  r.episode_start[0] = 1;
  return r;
}

// The host engine, except that its Adam step overflows one weight (as a learning rate near the
// float range would): the update must notice before the weights go anywhere.
class OverflowingEngine : public test::WrappedHostEngine {
 public:
  explicit OverflowingEngine(policy::PolicyLearner& learner)
      : WrappedHostEngine(agent::make_host_ppo_engine(learner, 1e-5f)) {}
  void apply(double norm, double max_norm, double lr) override {
    inner().apply(norm, max_norm, lr);
    auto t = inner().to_tensors();
    t.at("critic.weight").data[5] = std::numeric_limits<float>::infinity();
    inner().load(t);
  }
};
}  // namespace

TEST_CASE("PPO stops at the first non-finite minibatch by default, naming it") {
  const policy::PolicySpec spec = test::small_policy_spec();
  Rng rng(1);
  policy::PolicyLearner learner(spec);
  learner.load(policy::init_policy(spec, rng));
  agent::AlgoConfig cfg;
  cfg.epochs = 2;
  cfg.num_minibatches = 2;
  REQUIRE(cfg.on_nonfinite == "stop");
  agent::PpoUpdater ppo(cfg, learner, 0);
  agent::Rollout good = make_rollout(spec, 4, 4, rng);
  CHECK(ppo.update(good, 0.0).skipped == 0);

  agent::Rollout bad = make_rollout(spec, 4, 4, rng);
  bad.rewards[2 * 4 + 1] = std::numeric_limits<float>::infinity();
  const auto kept = learner.to_tensors();
  CHECK_THROWS_WITH_AS(ppo.update(bad, 0.0, 4096),
                       doctest::Contains("the update at env step 4096 (epoch 1 of 2, minibatch 1 "
                                         "of 2): the value loss is non-finite (policy loss"),
                       agent::NonFiniteUpdate);
  CHECK(learner.to_tensors() == kept);  // no step was taken
}

TEST_CASE("PPO stops when a step leaves a parameter non-finite") {
  const policy::PolicySpec spec = test::small_policy_spec();
  Rng rng(2);
  policy::PolicyLearner learner(spec);
  learner.load(policy::init_policy(spec, rng));
  agent::AlgoConfig cfg;
  cfg.epochs = 1;
  cfg.num_minibatches = 1;
  agent::PpoUpdater ppo(cfg, std::make_unique<OverflowingEngine>(learner), 0);
  agent::Rollout r = make_rollout(spec, 4, 2, rng);
  CHECK_THROWS_WITH_AS(ppo.update(r, 0.0, 64),
                       doctest::Contains("the update at env step 64 left parameter "
                                         "critic.weight non-finite (inf at index 5 = [0, 5]"),
                       agent::NonFiniteUpdate);
}

TEST_CASE("algo.on_nonfinite: skip skips non-finite updates and aborts after too many in a row") {
  const policy::PolicySpec spec = test::small_policy_spec();
  Rng rng(1);
  policy::PolicyLearner learner(spec);
  learner.load(policy::init_policy(spec, rng));
  agent::AlgoConfig cfg;
  cfg.epochs = 1;
  cfg.num_minibatches = 1;
  cfg.on_nonfinite = "skip";
  cfg.max_nonfinite_updates = 3;
  agent::PpoUpdater ppo(cfg, learner, 0);

  agent::Rollout good = make_rollout(spec, 4, 2, rng);
  const auto before = learner.to_tensors();
  const auto stats = ppo.update(good, 0.0);
  CHECK(stats.skipped == 0);
  CHECK(learner.to_tensors() != before);  // a finite update moves the weights

  agent::Rollout bad = make_rollout(spec, 4, 2, rng);
  bad.rewards[3] = std::nanf("");
  const auto kept = learner.to_tensors();
  for (int i = 0; i < 2; ++i) {
    const auto s = ppo.update(bad, 0.0, 1000);
    CHECK(s.skipped == 1);
    CHECK(learner.to_tensors() == kept);  // nothing non-finite reached the weights
  }
  CHECK(ppo.consecutive_nonfinite() == 2);
  agent::Rollout good_again = make_rollout(spec, 4, 2, rng);
  CHECK(ppo.update(good_again, 0.0).skipped == 0);  // a good update ends the streak
  CHECK(ppo.consecutive_nonfinite() == 0);
  const auto kept_again = learner.to_tensors();
  CHECK(kept_again != kept);
  for (int i = 0; i < 2; ++i) CHECK(ppo.update(bad, 0.0, 1500).skipped == 1);
  CHECK_THROWS_WITH_AS(ppo.update(bad, 0.0, 2000),
                       doctest::Contains("3 updates in a row had minibatches with a non-finite "
                                         "loss or gradient (algo.max_nonfinite_updates = 3); the "
                                         "last one's first: the update at env step 2000"),
                       agent::NonFiniteUpdate);
  CHECK(learner.to_tensors() == kept_again);
}

TEST_CASE("the CUDA learner engine says what is missing") {
  policy::PolicySpec spec;
  spec.obs_dim = 3;
  spec.action_dim = 2;
  spec.hidden = 8;
  policy::Placement cuda;
  cuda.device = policy::Device::kCuda;
#ifdef RECUR_WITH_CUDA
  // A CUDA build: the engine needs a GPU (the trainer refuses cuda without one before this).
  if (policy::query_devices().cuda_usable()) {
    auto engine = agent::make_cuda_ppo_engine(spec, cuda, 1e-5f);
    CHECK(engine->device() == policy::Device::kCuda);
  } else {
    CHECK_THROWS(agent::make_cuda_ppo_engine(spec, cuda, 1e-5f));  // a CUDA error, not a crash
  }
#else
  CHECK_THROWS_WITH_AS(agent::make_cuda_ppo_engine(spec, cuda, 1e-5f),
                       doctest::Contains("set device.learner: cpu"), recur::Error);
#endif
}
