// The prev_action / prev_reward options (envs/wrappers/previous_step.h) on real envs.
#include <doctest/doctest.h>

#include <vector>

#include "core/error.h"
#include "envs/env_check.h"
#include "envs/registry.h"

namespace {

using recur::Options;
using recur::envs::make;

std::vector<float> copy(std::span<const float> s) {
  return {s.begin(), s.end()};
}

TEST_CASE("prev_action and prev_reward append one-hot action, reward and the first flag") {
  auto plain = make("CartPole-v1");
  auto env = make("CartPole-v1", Options{}.set("prev_action", "true").set("prev_reward", "true"));
  REQUIRE(env->obs_dim() == 4 + 2 + 1 + 1);
  CHECK(env->action_space().is_discrete());
  CHECK(env->max_episode_steps() == 500);  // the registered limit stays with the outer env

  const auto first = copy(env->reset(7));
  const auto first_plain = copy(plain->reset(7));
  for (int i = 0; i < 4; ++i) CHECK(first[i] == first_plain[i]);
  CHECK(first[4] == 0.0f);
  CHECK(first[5] == 0.0f);
  CHECK(first[6] == 0.0f);  // reward
  CHECK(first[7] == 1.0f);  // first observation of the episode

  const float right[] = {1.0f};
  const auto r = env->step(right);
  const auto rp = plain->step(right);
  for (int i = 0; i < 4; ++i) CHECK(r.obs[i] == rp.obs[i]);
  CHECK(r.reward == rp.reward);
  CHECK(r.obs[4] == 0.0f);
  CHECK(r.obs[5] == 1.0f);
  CHECK(r.obs[6] == 1.0f);
  CHECK(r.obs[7] == 0.0f);
  const float left[] = {0.0f};
  const auto r2 = env->step(left);
  CHECK(r2.obs[4] == 1.0f);
  CHECK(r2.obs[5] == 0.0f);
}

TEST_CASE("a Box action is appended clipped to its bounds, reward alone works") {
  auto env = make("Pendulum-v1", Options{}.set("prev_action", "1"));
  REQUIRE(env->obs_dim() == 3 + 1 + 1);
  CHECK(env->observation_space().high()[3] == 2.0f);
  env->reset(1);
  const float big[] = {5.0f};
  CHECK(env->step(big).obs[3] == 2.0f);
  const float small[] = {-0.5f};
  CHECK(env->step(small).obs[3] == -0.5f);

  auto rew = make("Pendulum-v1", Options{}.set("prev_reward", "true"));
  REQUIRE(rew->obs_dim() == 3 + 1 + 1);
  rew->reset(1);
  const auto r = rew->step(small);
  CHECK(r.obs[3] == static_cast<float>(r.reward));
  CHECK(r.obs[4] == 0.0f);
}

TEST_CASE("the wrapped env's state round-trips and snapshots resume exactly") {
  const auto options = Options{}.set("prev_action", "true").set("prev_reward", "true");
  auto env = make("Acrobot-v1", options);
  env->reset(3);
  const float a[] = {2.0f};
  for (int i = 0; i < 5; ++i) env->step(a);
  const auto snap = env->snapshot();
  REQUIRE(static_cast<int>(snap.state.size()) == env->state_size());
  const float b[] = {0.0f};
  std::vector<std::vector<float>> first, second;
  for (int i = 0; i < 4; ++i) first.push_back(copy(env->step(i % 2 ? a : b).obs));
  CHECK_FALSE(env->restore(snap));
  for (int i = 0; i < 4; ++i) second.push_back(copy(env->step(i % 2 ? a : b).obs));
  CHECK(first == second);

  std::vector<double> bad(snap.state);
  bad.back() = 0.5;  // the first flag is 0 or 1
  CHECK_THROWS_AS(env->set_state(bad), std::invalid_argument);
}

TEST_CASE("wrapped envs pass the env checks, a bad value is named") {
  for (const char* id : {"CartPole-v1", "Pendulum-v1", "RepeatPreviousEasy-v0"}) {
    CAPTURE(id);
    const auto report =
        recur::envs::check_env(id, Options{}.set("prev_action", "true").set("prev_reward", "true"));
    for (const auto& res : report.results) {
      INFO(res.name << ": " << res.detail);
      CHECK(res.passed);
    }
  }
  CHECK_THROWS_WITH_AS(make("CartPole-v1", Options{}.set("prev_action", "maybe")),
                       doctest::Contains("prev_action"), recur::Error);
}

}  // namespace
