// The async actor-learner pipeline (algo.async): lag accounting, repeatability (the actor thread
// and the learner share no state while both run), stop and resume. Run under ThreadSanitizer with a
// -DRECUR_SANITIZE=thread build (docs/PERFORMANCE.md, "Async actor-learner").
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "agent/config/yaml.h"
#include "agent/ppo/trainer.h"
#include "agent/ppo/trainer_state.h"
#include "agent/run/resume_state.h"
#include "agent/train_job.h"
#include "policy/policy_checkpoint.h"
#include "tests/support/temp_dir.h"

using namespace recur;

namespace {
agent::TrainConfig small(bool async) {
  agent::TrainConfig c;
  c.env.id = "CartPole-v1";
  c.env.num_envs = 4;
  c.env.normalize_reward = true;
  c.policy.encoder = {16};
  c.policy.hidden = 16;
  c.algo.rollout_steps = 16;
  c.algo.epochs = 2;
  c.algo.num_minibatches = 2;
  c.algo.async = async;
  c.run.total_env_steps = 64 * 6;
  return c;
}

struct Trace {
  std::vector<int> lags;
  std::vector<int64_t> versions, steps;
  std::vector<double> returns;
  policy::TensorMap weights;
};

Trace train_trace(const agent::TrainConfig& c) {
  agent::PpoTrainer t(c);
  Trace out;
  while (!t.done()) {
    const auto it =
        t.iterate([&](const agent::EpisodeEnd& e) { out.returns.push_back(e.episode_return); });
    out.lags.push_back(it.policy_lag);
    out.versions.push_back(it.policy_version);
    out.steps.push_back(it.env_steps);
  }
  out.weights = t.policy_tensors();
  return out;
}

bool same_weights(const policy::TensorMap& a, const policy::TensorMap& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [name, t] : a)
    if (!b.contains(name) || b.at(name).data != t.data) return false;
  return true;
}
}  // namespace

TEST_CASE(
    "async: every rollout is trained once, by weights one update newer than those that acted") {
  const Trace sync = train_trace(small(false));
  const Trace async = train_trace(small(true));
  // 6 rollouts of 64 steps either way: 6 updates.
  CHECK(sync.lags == std::vector<int>(6, 0));
  CHECK(sync.versions == std::vector<int64_t>{1, 2, 3, 4, 5, 6});
  CHECK(sync.steps == std::vector<int64_t>{64, 128, 192, 256, 320, 384});
  // Async: rollout 0 is collected by version 0 and trained by version 0; every later rollout was
  // collected while the previous update ran, by the weights before it. The first iteration
  // collects two rollouts, the last collects none (all steps are in).
  CHECK(async.lags == std::vector<int>{0, 1, 1, 1, 1, 1});
  CHECK(async.versions == std::vector<int64_t>{1, 2, 3, 4, 5, 6});
  CHECK(async.steps == std::vector<int64_t>{128, 192, 256, 320, 384, 384});
  // Different weights acted, so the runs differ; the episodes themselves start alike (version 0
  // acts on the first two rollouts in async, the first one in sync).
  CHECK_FALSE(same_weights(sync.weights, async.weights));
}

TEST_CASE("async: the anchor takes the ratio against the learner's policy at the update's start") {
  // One epoch of one minibatch: the update's statistics are its first minibatch's. Anchored, the
  // ratio starts at exactly 1 (the anchor's log-probs come from the same forward pass as the
  // loss's), so approx KL and clip fraction are 0 on every update; against the behaviour policy
  // one update older they are not.
  for (const bool anchor : {true, false}) {
    CAPTURE(anchor);
    auto c = small(true);
    c.algo.epochs = 1;
    c.algo.num_minibatches = 1;
    c.algo.async_anchor = anchor;
    agent::PpoTrainer t(c);
    double kl_after_first = 0;
    while (!t.done()) {
      const auto it = t.iterate(nullptr);
      if (it.policy_lag == 0) continue;
      if (anchor) {
        CHECK(t.last_update().approx_kl == 0.0);
        CHECK(t.last_update().clip_fraction == 0.0);
      }
      kl_after_first += std::abs(t.last_update().approx_kl);
    }
    if (!anchor) CHECK(kl_after_first > 0.0);
  }
}

TEST_CASE("async: runs repeat exactly (the threads share no state while both run)") {
  const Trace a = train_trace(small(true));
  const Trace b = train_trace(small(true));
  CHECK(same_weights(a.weights, b.weights));
  CHECK(a.returns == b.returns);
}

TEST_CASE("async: a stop keeps the pending rollout, and a resume anywhere continues exactly") {
  recur::test::TempDir dir("async_stop");
  auto c = small(true);
  c.run.output_dir = dir.path.string();
  c.run.total_env_steps = 1024;
  c.run.eval_every = 480;  // evaluations (and saves) at 512 and at 960, one rollout before the end
  c.run.eval_episodes = 2;
  c.run.final_eval_episodes = 2;
  auto latest = [](const std::filesystem::path& run) {
    return policy::load_policy(run / "checkpoints" / "latest.safetensors").tensors;
  };
  std::atomic<bool> stop{true};
  agent::TrainJobOptions o;
  o.name = "stop";
  o.stop_requested = &stop;
  const auto r = agent::run_train_job(c, agent::to_yaml(c), o);
  CHECK(r.interrupted);
  CHECK(r.env_steps == 128);  // rollout 0 trained, rollout 1 collected meanwhile and kept
  {
    const auto text = recur::test::read_all(r.run_dir / "trainer_state.safetensors");
    const auto state = agent::parse_resume_state(text, "test");
    const auto t = agent::parse_trainer_state(state.trainer_states.at(0));
    REQUIRE(t.pending.has_value());
    CHECK(t.pending->steps == 16);
    CHECK(t.pending->env_steps == 128);
    CHECK(t.pending->version ==
          0);  // collected during rollout 0's update, by the weights before it
  }
  agent::TrainJobOptions full;
  full.name = "full";
  const auto unbroken = agent::run_train_job(c, agent::to_yaml(c), full);
  CHECK(unbroken.env_steps == 1024);  // the pipeline collects nothing past the budget
  // Stopped at an evaluation (512, drained there as the unbroken run is) and between two (704,
  // with a rollout pending), then resumed: the same evaluations, final evaluation and weights as
  // the unbroken run. Draining at the stop made the run after 704 another one.
  for (const int64_t at : {512, 704}) {
    CAPTURE(at);
    agent::TrainJobOptions part;
    part.name = "part" + std::to_string(at);
    part.stop_at_env_steps = at;
    const auto first = agent::run_train_job(c, agent::to_yaml(c), part);
    CHECK(first.interrupted);
    agent::TrainJobOptions rest;
    rest.resume_dir = first.run_dir;
    const auto resumed = agent::run_train_job(c, agent::to_yaml(c), rest);
    CHECK_FALSE(resumed.interrupted);
    CHECK(resumed.final_eval.returns == unbroken.final_eval.returns);
    auto eval_rows = [](const std::filesystem::path& p) {
      return recur::test::read_all(p / "eval.csv");
    };
    CHECK(eval_rows(resumed.run_dir) == eval_rows(unbroken.run_dir));
    CHECK(same_weights(latest(resumed.run_dir), latest(unbroken.run_dir)));
  }
  // Resumed with algo.async off, the kept rollout is trained on, then the run goes on in step.
  auto sync = c;
  sync.algo.async = false;
  agent::TrainJobOptions part;
  part.name = "to_sync";
  part.stop_at_env_steps = 704;
  const auto first = agent::run_train_job(c, agent::to_yaml(c), part);
  agent::TrainJobOptions rest;
  rest.resume_dir = first.run_dir;
  const auto resumed = agent::run_train_job(sync, agent::to_yaml(sync), rest);
  CHECK_FALSE(resumed.interrupted);
  CHECK(resumed.env_steps == 1024);
}
