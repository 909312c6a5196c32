// Swimmer, InvertedPendulum, InvertedDoublePendulum, Reacher and Humanoid (envs/mujoco), v4 and
// v5: ids,
// spaces, the termination and reward edges that differ between versions, and exact resume. Each
// case skips where recur was built without MuJoCo (RECUR_HAVE_MUJOCO, tests/CMakeLists.txt).
// Gymnasium parity is tools/python/tests/test_mujoco_parity.py.
#include <doctest/doctest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "envs/registry.h"
#include "tests/support/skip.h"

namespace {

using recur::envs::Env;

struct Expected {
  const char* id;
  int max_episode_steps;
  std::optional<double> threshold;
  int obs_dim, action_dim;
  float action_high;
};

const Expected kExpected[] = {
    {"Swimmer-v4", 1000, 360.0, 8, 2, 1.0f},
    {"Swimmer-v5", 1000, 360.0, 8, 2, 1.0f},
    {"InvertedPendulum-v4", 1000, 950.0, 4, 1, 3.0f},
    {"InvertedPendulum-v5", 1000, 950.0, 4, 1, 3.0f},
    {"InvertedDoublePendulum-v4", 1000, 9100.0, 11, 1, 1.0f},
    {"InvertedDoublePendulum-v5", 1000, 9100.0, 9, 1, 1.0f},
    {"Reacher-v4", 50, -3.75, 11, 2, 1.0f},
    {"Reacher-v5", 50, -3.75, 10, 2, 1.0f},
    {"Humanoid-v4", 1000, std::nullopt, 376, 17, 0.4f},
    {"Humanoid-v5", 1000, std::nullopt, 348, 17, 0.4f},
};

[[maybe_unused]] std::vector<float> action_at(int step, int dim, float high) {
  std::vector<float> a(static_cast<size_t>(dim));
  for (int i = 0; i < dim; ++i)
    a[static_cast<size_t>(i)] = high * static_cast<float>(1.3 * std::sin(0.7 * step + 1.9 * i));
  return a;
}

}  // namespace

TEST_CASE("mujoco more: ids with Gymnasium's limits, thresholds and spaces") {
  const auto& reg = recur::envs::registry();
  for (const Expected& e : kExpected) {
    CAPTURE(e.id);
    REQUIRE(reg.find(e.id) != nullptr);
    CHECK(reg.at(e.id).max_episode_steps == e.max_episode_steps);
    CHECK(reg.at(e.id).reward_threshold == e.threshold);
    CHECK(reg.at(e.id).family == "mujoco");
#ifdef RECUR_HAVE_MUJOCO
    auto env = recur::envs::make(e.id);
    CHECK(env->obs_dim() == e.obs_dim);
    CHECK(env->action_dim() == e.action_dim);
    CHECK(env->action_space().high()[0] == e.action_high);
    CHECK(env->action_space().low()[0] == -e.action_high);
#else
    CHECK_FALSE(reg.at(e.id).available);
#endif
  }
}

TEST_CASE("mujoco more: the pendulums fall, v5 pays nothing on the falling step") {
#ifndef RECUR_HAVE_MUJOCO
  recur::test::skip("recur was built without MuJoCo (RECUR_MUJOCO)");
#else
  for (const std::string name : {"InvertedPendulum", "InvertedDoublePendulum"}) {
    for (const std::string v : {"-v4", "-v5"}) {
      CAPTURE(name + v);
      auto env = recur::envs::make(name + v);
      env->reset(5);
      // Full force one way: the pole falls well within the time limit.
      const std::vector<float> push(1, env->action_space().high()[0]);
      recur::envs::StepResult r;
      int steps = 0;
      do {
        r = env->step(push);
        ++steps;
      } while (!r.done());
      CHECK(r.terminated);
      CHECK(steps < 200);
      if (name == "InvertedPendulum") {
        CHECK(r.reward == (v == "-v5" ? 0.0 : 1.0));
        CHECK(std::abs(r.obs[1]) > 0.2f);
      } else {
        // alive (10 in v4, 0 in v5) - distance and velocity penalties: the tip is low (y <= 1)
        CHECK(r.reward < (v == "-v5" ? -1.0 : 9.0));
      }
    }
  }
#endif
}

TEST_CASE("mujoco more: Reacher's target starts in the disc, at rest, and the limit is 50") {
#ifndef RECUR_HAVE_MUJOCO
  recur::test::skip("recur was built without MuJoCo (RECUR_MUJOCO)");
#else
  auto env = recur::envs::make("Reacher-v5");
  for (uint64_t seed = 0; seed < 20; ++seed) {
    env->reset(seed);
    const auto o = env->observation();
    CHECK(std::hypot(o[4], o[5]) < 0.2f);  // target x, y
    CHECK(std::abs(o[6]) <= 0.005f);       // arm velocities
    CHECK(std::abs(o[7]) <= 0.005f);
    for (int i = 0; i < 2; ++i) CHECK(std::abs(o[i] * o[i] + o[2 + i] * o[2 + i] - 1.0f) < 1e-6f);
  }
  int steps = 0;
  recur::envs::StepResult r;
  do {
    r = env->step(action_at(steps, 2, 1.0f));
    ++steps;
    CHECK(r.reward < 0.0);  // -distance - control
  } while (!r.done());
  CHECK(r.truncated);
  CHECK_FALSE(r.terminated);
  CHECK(steps == 50);
  CHECK_THROWS_AS(recur::envs::make("Reacher-v5", recur::Options{}.set("reset_noise_scale", "0.1")),
                  recur::Error);
#endif
}

TEST_CASE("mujoco more: restore() continues an episode bit-exactly") {
#ifndef RECUR_HAVE_MUJOCO
  recur::test::skip("recur was built without MuJoCo (RECUR_MUJOCO)");
#else
  for (const Expected& e : kExpected) {
    CAPTURE(e.id);
    // Small actions; a pendulum that falls ends the comparison early.
    const float scale = 0.02f;
    auto env = recur::envs::make(e.id);
    env->reset(11);
    for (int t = 0; t < 10; ++t) REQUIRE_FALSE(env->step(action_at(t, e.action_dim, scale)).done());
    const Env::Snapshot mid = env->snapshot();
    std::vector<std::vector<float> > obs;
    std::vector<double> rewards;
    for (int t = 10; t < 30; ++t) {
      const auto r = env->step(action_at(t, e.action_dim, scale));
      obs.emplace_back(r.obs.begin(), r.obs.end());
      rewards.push_back(r.reward);
      if (r.done()) break;
    }
    auto other = recur::envs::make(e.id);
    other->restore(mid);
    for (int t = 10; t < 10 + static_cast<int>(obs.size()); ++t) {
      const auto r = other->step(action_at(t, e.action_dim, scale));
      CHECK(std::vector<float>(r.obs.begin(), r.obs.end()) == obs[static_cast<size_t>(t - 10)]);
      CHECK(r.reward == rewards[static_cast<size_t>(t - 10)]);
    }
  }
#endif
}
