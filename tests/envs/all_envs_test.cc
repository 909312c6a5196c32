// One test over every registered env: the shared env checks (envs/env_check.h) must all pass.
#include <doctest/doctest.h>

#include "core/error.h"
#include "envs/env_check.h"
#include "envs/registry.h"

TEST_CASE("every registered env passes the env checks") {
  const auto ids = recur::envs::registry().ids();
  REQUIRE(ids.size() >= 13);
  for (const auto& id : ids) {
    CAPTURE(id);
    const auto report = recur::envs::check_env(id);
    REQUIRE(report.results.size() >= 8);
    for (const auto& r : report.results) {
      INFO(r.name << ": " << r.detail);
      CHECK(r.passed);
    }
  }
}

TEST_CASE("env checks catch a broken env") {
  // An option that makes the reset range invalid must surface as a failed check, not a crash.
  recur::Options bad;
  bad.set("reset_low", "1").set("reset_high", "0");
  const auto report = recur::envs::check_env("CartPole-v1", bad);
  CHECK_FALSE(report.passed());
  CHECK(report.results.front().detail.find("reset_low") != std::string::npos);
}

TEST_CASE("registered time limits and thresholds follow Gymnasium") {
  const auto& reg = recur::envs::registry();
  CHECK(reg.at("CartPole-v1").max_episode_steps == 500);
  CHECK(*reg.at("CartPole-v1").reward_threshold == 475.0);
  CHECK(reg.at("CartPole-v0").max_episode_steps == 200);
  CHECK(reg.at("Pendulum-v1").max_episode_steps == 200);
  CHECK_FALSE(reg.at("Pendulum-v1").reward_threshold.has_value());
  CHECK(reg.at("MountainCar-v0").max_episode_steps == 200);
  CHECK(*reg.at("MountainCar-v0").reward_threshold == -110.0);
  CHECK(reg.at("MountainCarContinuous-v0").max_episode_steps == 999);
  CHECK(reg.at("Acrobot-v1").max_episode_steps == 500);
  CHECK(reg.at("CartPoleNoVel-v1").max_episode_steps == 500);
  CHECK(reg.at("RepeatPreviousHard-v0").max_episode_steps == 0);
  for (const char* id : {"LunarLander-v3", "LunarLanderContinuous-v3", "LunarLanderNoVel-v3",
                         "LunarLanderContinuousNoVel-v3"}) {
    CAPTURE(id);
    CHECK(reg.at(id).max_episode_steps == 1000);
    CHECK(*reg.at(id).reward_threshold == 200.0);
  }
  CHECK(reg.at("BipedalWalker-v3").max_episode_steps == 1600);
  CHECK(reg.at("BipedalWalkerHardcore-v3").max_episode_steps == 2000);
  CHECK(*reg.at("BipedalWalker-v3").reward_threshold == 300.0);
  CHECK(*reg.at("BipedalWalkerHardcore-v3").reward_threshold == 300.0);
}

TEST_CASE("unknown ids and options name the closest matches") {
  try {
    recur::envs::make("Cartpole-v1");
    FAIL("no error");
  } catch (const recur::Error& e) {
    CHECK(std::string(e.what()).find("CartPole-v1") != std::string::npos);
  }
  try {
    recur::envs::make("MountainCar-v0", recur::Options{}.set("goal_velocty", "0.1"));
    FAIL("no error");
  } catch (const recur::Error& e) {
    CHECK(std::string(e.what()).find("Did you mean 'goal_velocity'") != std::string::npos);
  }
  CHECK_THROWS_AS(recur::envs::make("Pendulum-v1", recur::Options{}.set("g", "ten")), recur::Error);
  CHECK_THROWS_AS(recur::envs::make("Pendulum-v1", recur::Options{}.set("max_episode_steps", "-1")),
                  recur::Error);
}

TEST_CASE("env options change the dynamics") {
  auto a = recur::envs::make("Pendulum-v1");
  auto b = recur::envs::make("Pendulum-v1", recur::Options{}.set("g", "1.0"));
  a->reset(3);
  b->reset(3);
  const float u[1] = {0.0f};
  CHECK(a->step(u).obs[2] != b->step(u).obs[2]);
  auto limited = recur::envs::make("Pendulum-v1", recur::Options{}.set("max_episode_steps", "7"));
  CHECK(limited->max_episode_steps() == 7);
}
