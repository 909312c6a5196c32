// PPO's guard against non-finite updates: a NaN in the data skips the update (weights untouched)
// and enough of them in a row abort the run with a clear error.
#include "agent/ppo.h"

#include <doctest/doctest.h>

#include <cmath>

#include "core/error.h"
#include "policy/devices.h"
#include "policy/policy_spec.h"

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
}  // namespace

TEST_CASE("PPO skips non-finite updates and aborts after too many in a row") {
  policy::PolicySpec spec;
  spec.obs_dim = 3;
  spec.action_dim = 2;
  spec.encoder = {8};
  spec.hidden = 8;
  Rng rng(1);
  policy::PolicyLearner learner(spec);
  learner.load(policy::init_policy(spec, rng));
  agent::AlgoConfig cfg;
  cfg.epochs = 1;
  cfg.num_minibatches = 1;
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
  CHECK_THROWS_WITH_AS(ppo.update(bad, 0.0, 2000), doctest::Contains("env step 2000"),
                       recur::Error);
  CHECK(learner.to_tensors() == kept);
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
