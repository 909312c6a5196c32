#include "envs/vector_env.h"

#include <doctest/doctest.h>

#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "envs/registry.h"
#include "tests/support/alloc_counter.h"
#include "tests/support/skip.h"

using recur::envs::VectorEnv;

namespace {
std::vector<float> constant_actions(const VectorEnv& v, float a) {
  return std::vector<float>(static_cast<size_t>(v.num_envs() * v.action_dim()), a);
}
}  // namespace

TEST_CASE("VectorEnv batches shapes and starts every episode") {
  VectorEnv v("CartPole-v1", 5);
  CHECK(v.num_envs() == 5);
  CHECK(v.obs_dim() == 4);
  CHECK(v.action_dim() == 1);
  v.reset(42);
  CHECK(v.obs().size() == 20);
  for (auto s : v.episode_start()) CHECK(s == 1);
  v.step(constant_actions(v, 1));
  for (auto s : v.episode_start()) CHECK(s == 0);
  CHECK_THROWS_AS(v.step(std::vector<float>(4, 1.0f)), std::invalid_argument);
}

TEST_CASE("VectorEnv seeds env i with derive_seed of the seed and i") {
  VectorEnv v("Acrobot-v1", 3);
  v.reset(7);
  for (int i = 0; i < 3; ++i) {
    auto single = recur::envs::make("Acrobot-v1");
    const auto obs = single->reset(recur::derive_seed(7, static_cast<uint64_t>(i)));
    for (int k = 0; k < v.obs_dim(); ++k) CHECK(v.obs()[i * v.obs_dim() + k] == obs[k]);
  }
  // Rows differ: no two envs share a stream.
  CHECK(v.obs()[0] != v.obs()[6]);
}

TEST_CASE("VectorEnv autoreset is SAME_STEP and keeps the final observation") {
  // Pushing right only, CartPole falls within ~10 steps; a time limit of 6 truncates env 1
  // (given its own options via a second VectorEnv would change spaces, so use the limit on all
  // and compare against single envs stepped by hand).
  const int n = 3;
  VectorEnv v("CartPole-v1", n, recur::Options{}.set("max_episode_steps", "6"));
  std::vector<std::unique_ptr<recur::envs::Env>> ref;
  for (int i = 0; i < n; ++i) {
    ref.push_back(recur::envs::make("CartPole-v1", recur::Options{}.set("max_episode_steps", "6")));
    ref.back()->reset(recur::derive_seed(11, static_cast<uint64_t>(i)));
  }
  v.reset(11);
  int ended = 0;
  for (int t = 0; t < 20; ++t) {
    std::vector<float> actions(n);
    for (int i = 0; i < n; ++i) actions[i] = static_cast<float>((t + i) % 2);
    v.step(actions);
    for (int i = 0; i < n; ++i) {
      const float a[1] = {actions[i]};
      const auto r = ref[i]->step(a);
      CHECK(v.rewards()[i] == static_cast<float>(r.reward));
      CHECK(v.terminated()[i] == r.terminated);
      CHECK(v.truncated()[i] == r.truncated);
      CHECK(v.episode_start()[i] == r.done());
      if (r.done()) {
        ++ended;
        for (int k = 0; k < 4; ++k) CHECK(v.final_obs()[i * 4 + k] == r.obs[k]);
        CHECK(v.final_return()[i] == ref[i]->episode_return());
        CHECK(v.final_length()[i] == ref[i]->elapsed_steps());
        // The same step already returns the next episode's first observation.
        const auto first = ref[i]->reset();
        for (int k = 0; k < 4; ++k) CHECK(v.obs()[i * 4 + k] == first[k]);
      } else {
        for (int k = 0; k < 4; ++k) CHECK(v.obs()[i * 4 + k] == r.obs[k]);
      }
    }
  }
  CHECK(ended >= n * 3);
}

TEST_CASE("VectorEnv slots do not talk to each other") {
  // Env 0 gets the same actions in both runs; the other envs' actions change. Env 0's stream
  // (observations, rewards, flags) must be identical.
  auto run = [](float other) {
    VectorEnv v("MountainCar-v0", 4);
    v.reset(3);
    std::vector<float> trace;
    for (int t = 0; t < 300; ++t) {
      std::vector<float> actions = {static_cast<float>(t % 3), other, other, other};
      v.step(actions);
      trace.insert(trace.end(), v.obs().begin(), v.obs().begin() + 2);
      trace.push_back(v.rewards()[0]);
      trace.push_back(v.episode_start()[0]);
    }
    return trace;
  };
  CHECK(run(0.0f) == run(2.0f));
}

TEST_CASE("VectorEnv with threads equals one thread") {
  auto run = [](int threads) {
    VectorEnv v("Pendulum-v1", 7, {}, threads);
    CHECK(v.num_threads() == threads);
    v.reset(5);
    recur::Rng rng(9);
    std::vector<float> actions(7), trace;
    for (int t = 0; t < 450; ++t) {
      for (auto& a : actions) a = static_cast<float>(rng.uniform(-2, 2));
      v.step(actions);
      trace.insert(trace.end(), v.obs().begin(), v.obs().end());
      trace.insert(trace.end(), v.rewards().begin(), v.rewards().end());
    }
    return trace;
  };
  CHECK(run(1) == run(3));
}

TEST_CASE("VectorEnv results do not depend on threads or schedule, resets included") {
  // Random actions end many episodes (each env resets from its own RNG inside a chunk): every
  // buffer must be bit-identical to one thread, whichever thread stepped which env.
  using Schedule = VectorEnv::Schedule;
  struct Case {
    const char* id;
    int num_envs, steps;
  };
  for (const Case c : {Case{"CartPole-v1", 37, 400}, Case{"LunarLander-v3", 11, 250}}) {
    CAPTURE(c.id);
    auto run = [&](int threads, Schedule schedule, int chunks_per_thread) {
      VectorEnv v(c.id, c.num_envs, {}, threads);
      v.set_schedule(schedule, chunks_per_thread);
      v.reset(21);
      recur::Rng rng(4);
      std::vector<float> actions(static_cast<size_t>(c.num_envs * v.action_dim())), trace;
      int ends = 0;
      for (int t = 0; t < c.steps; ++t) {
        for (size_t i = 0; i < actions.size(); i += static_cast<size_t>(v.action_dim()))
          v.single_action_space().sample(rng, std::span(actions).subspan(i, v.action_dim()));
        v.step(actions);
        trace.insert(trace.end(), v.obs().begin(), v.obs().end());
        trace.insert(trace.end(), v.rewards().begin(), v.rewards().end());
        for (int i = 0; i < c.num_envs; ++i) {
          trace.push_back(static_cast<float>(v.terminated()[i] + 2 * v.truncated()[i] +
                                             4 * v.episode_start()[i]));
          if (!v.episode_start()[i]) continue;
          ++ends;
          const auto row = v.final_obs().subspan(static_cast<size_t>(i * v.obs_dim()), v.obs_dim());
          trace.insert(trace.end(), row.begin(), row.end());
          trace.push_back(static_cast<float>(v.final_return()[i]));
          trace.push_back(static_cast<float>(v.final_length()[i]));
        }
      }
      CHECK(ends > c.num_envs);  // resets did happen
      return trace;
    };
    const auto one = run(1, Schedule::kDynamic, 4);
    CHECK(run(2, Schedule::kDynamic, 4) == one);
    CHECK(run(3, Schedule::kDynamic, 1) == one);
    CHECK(run(3, Schedule::kStatic, 4) == one);
    CHECK(run(5, Schedule::kDynamic, 8) == one);
  }
}

TEST_CASE("VectorEnv splits a step into chunks per its schedule") {
  using Schedule = VectorEnv::Schedule;
  VectorEnv v("CartPole-v1", 10, {}, 3);
  CHECK(v.schedule() == Schedule::kDynamic);
  CHECK(v.num_chunks() == 10);  // 3 x 4 chunks, but never fewer than one env per chunk
  v.set_schedule(Schedule::kDynamic, 2);
  CHECK(v.num_chunks() == 6);
  v.set_schedule(Schedule::kStatic);
  CHECK(v.num_chunks() == 3);
  CHECK_THROWS_AS(v.set_schedule(Schedule::kDynamic, 0), std::invalid_argument);
  CHECK(v.worker_pool() != nullptr);
  VectorEnv single("CartPole-v1", 10);
  CHECK(single.num_chunks() == 1);
  CHECK(single.worker_pool() == nullptr);
}

TEST_CASE("VectorEnv rejects a bad action before stepping any env") {
  VectorEnv v("CartPole-v1", 3, {}, 2);
  v.reset(1);
  const std::vector<float> before(v.obs().begin(), v.obs().end());
  std::vector<float> actions = {1, 0, 2};
  try {
    v.step(actions);
    FAIL("no error");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("env index 2") != std::string::npos);
  }
  CHECK(std::vector<float>(v.obs().begin(), v.obs().end()) == before);
  for (int i = 0; i < 3; ++i) CHECK(v.env(i).elapsed_steps() == 0);
  VectorEnv fresh("CartPole-v1", 2);
  CHECK_THROWS_AS(fresh.step(std::vector<float>(2, 0.0f)), std::logic_error);
}

TEST_CASE("VectorEnv steps without heap allocation") {
  if (!recur::test::AllocationCounter::available()) {
    recur::test::skip("allocation counting is off in sanitizer builds");
    return;
  }
  for (const char* id :
       {"CartPole-v1", "Acrobot-v1", "MountainCarContinuousNoVel-v0", "RepeatPreviousEasy-v0"}) {
    CAPTURE(id);
    for (int threads : {1, 2}) {
      VectorEnv v(id, 4, {}, threads);
      v.reset(0);
      const auto actions = constant_actions(v, 0.0f);
      v.step(actions);  // warm-up
      recur::test::AllocationCounter counter;
      for (int t = 0; t < 2000; ++t) v.step(actions);  // crosses many autoresets
      CHECK(counter.count() == 0);
    }
  }
}

TEST_CASE("VectorEnv decorrelate takes each env's documented random steps, on any threads") {
  constexpr int kEnvs = 48, kMax = 60, kFirst = 5;
  constexpr uint64_t kResetSeed = 3, kSeed = 11;
  VectorEnv v("CartPole-v1", kEnvs, {}, 2);
  CHECK_THROWS_AS(v.decorrelate(kMax, kSeed), recur::Error);  // before reset
  v.reset(kResetSeed, kFirst);
  v.decorrelate(kMax, kSeed, kFirst);
  int distinct = 0;
  std::vector<bool> seen(kMax + 1, false);
  for (int i = 0; i < kEnvs; ++i) {
    CAPTURE(i);
    // The reference: env kFirst + i reset as reset() does, then the random actions of its own
    // stream, reset where an episode ends.
    auto single = recur::envs::make("CartPole-v1");
    single->reset(recur::derive_seed(kResetSeed, static_cast<uint64_t>(kFirst + i)));
    recur::Rng rng(recur::derive_seed(kSeed, static_cast<uint64_t>(kFirst + i)));
    const auto steps = rng.uniform_int(kMax + 1);
    std::vector<float> action(1);
    for (uint64_t s = 0; s < steps; ++s) {
      single->action_space().sample(rng, action);
      if (single->step(action).done()) single->reset();
    }
    for (int k = 0; k < v.obs_dim(); ++k)
      CHECK(v.obs()[i * v.obs_dim() + k] == single->observation()[k]);
    CHECK(v.env(i).elapsed_steps() == single->elapsed_steps());
    CHECK(v.episode_start()[i] == (single->elapsed_steps() == 0 ? 1 : 0));
    CHECK(v.terminated()[i] == 0);
    CHECK(v.truncated()[i] == 0);
    const int at = v.env(i).elapsed_steps();
    if (!seen[static_cast<size_t>(at)]) seen[static_cast<size_t>(at)] = true, ++distinct;
  }
  // Spread out: 48 envs at one of many points of their episodes, not all at step 0.
  CHECK(distinct >= 8);
  // One thread gives the same envs.
  VectorEnv one("CartPole-v1", kEnvs);
  one.reset(kResetSeed, kFirst);
  one.decorrelate(kMax, kSeed, kFirst);
  CHECK(std::vector<float>(one.obs().begin(), one.obs().end()) ==
        std::vector<float>(v.obs().begin(), v.obs().end()));
  // And stepping goes on from there.
  const int before = v.env(0).elapsed_steps();
  v.step(constant_actions(v, 1));
  CHECK(v.env(0).elapsed_steps() == (v.episode_start()[0] ? 0 : before + 1));
  CHECK_THROWS_AS(v.decorrelate(-1, kSeed), std::invalid_argument);
}
