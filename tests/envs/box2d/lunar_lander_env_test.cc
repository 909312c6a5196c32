// LunarLander as a recur Env: registrations, options and their errors, action clipping,
// determinism, the NoVel twins, and no heap allocation (operator new) in steady-state steps.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/error.h"
#include "envs/box2d/heuristic.h"
#include "envs/box2d/lunar_lander.h"
#include "envs/registry.h"
#include "tests/support/alloc_counter.h"
#include "tests/support/skip.h"

namespace {
std::string error_of(const std::string& id, const recur::Options& options) {
  try {
    recur::envs::make(id, options);
  } catch (const recur::Error& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST_CASE("LunarLander env: registered as Gymnasium's, with NoVel twins") {
  const auto& reg = recur::envs::registry();
  for (const char* id : {"LunarLander-v3", "LunarLanderContinuous-v3", "LunarLanderNoVel-v3",
                         "LunarLanderContinuousNoVel-v3"}) {
    CAPTURE(id);
    const auto& spec = reg.at(id);
    CHECK(spec.family == "box2d");
    CHECK(spec.max_episode_steps == 1000);
    CHECK(*spec.reward_threshold == 200.0);
    auto env = recur::envs::make(id);
    CHECK(env->obs_dim() == 8);
    CHECK(env->render_info().width == 600);
    CHECK(env->render_info().height == 400);
    CHECK(env->render_info().fps == 50);
    CHECK(env->state_size() == 0);
  }
  CHECK(recur::envs::make("LunarLander-v3")->action_space().is_discrete());
  CHECK(recur::envs::make("LunarLanderContinuous-v3")->action_dim() == 2);
  CHECK(recur::envs::make("LunarLander-v3")->observation_space().to_string() ==
        "Box([-2.5 -2.5 -10 -10 -6.2831855 -10 0 0], [2.5 2.5 10 10 6.2831855 10 1 1], (8,), "
        "float32)");

  // NoVel: velocities (2, 3) and the angular velocity (5) read 0, the rest as the base env.
  auto novel = recur::envs::make("LunarLanderNoVel-v3");
  auto base = recur::envs::make("LunarLander-v3");
  novel->reset(4);
  base->reset(4);
  const float action[1] = {2};
  for (int t = 0; t < 10; ++t) {
    const auto rn = novel->step(action);
    const std::vector<float> on(rn.obs.begin(), rn.obs.end());
    const auto rb = base->step(action);
    for (int i = 0; i < 8; ++i) CHECK(on[i] == ((i == 2 || i == 3 || i == 5) ? 0.0f : rb.obs[i]));
    CHECK(rn.reward == rb.reward);
  }
}

TEST_CASE("LunarLander env: options, and clear errors for bad ones") {
  using recur::Options;
  for (const char* g : {"-12", "0", "3", "-20"}) {
    CAPTURE(g);
    const std::string err = error_of("LunarLander-v3", Options{}.set("gravity", g));
    CHECK(err.find("gravity") != std::string::npos);
    CHECK(err.find("(-12, 0)") != std::string::npos);
  }
  CHECK(error_of("LunarLander-v3", Options{}.set("wind_power", "inf")).find("finite") !=
        std::string::npos);
  CHECK(error_of("LunarLander-v3", Options{}.set("gravty", "-9")).find("gravity") !=
        std::string::npos);
  // Outside Gymnasium's recommended ranges: a warning, and the env runs.
  CHECK_NOTHROW(recur::envs::make(
      "LunarLander-v3",
      Options{}.set("enable_wind", "true").set("wind_power", "25").set("turbulence_power", "3")));

  // Gravity and wind change the dynamics.
  const auto first_obs = [](const Options& o) {
    auto env = recur::envs::make("LunarLander-v3", o);
    env->reset(3);
    const float a[1] = {0};
    std::vector<float> obs;
    for (int t = 0; t < 10; ++t) {
      const auto r = env->step(a);
      obs.assign(r.obs.begin(), r.obs.end());
    }
    return obs;
  };
  const auto plain = first_obs({});
  CHECK(first_obs(Options{}.set("gravity", "-5")) != plain);
  CHECK(first_obs(Options{}.set("enable_wind", "true")) != plain);
}

TEST_CASE("LunarLander env: continuous actions are clipped to [-1, 1], seeds name episodes") {
  auto a = recur::envs::make("LunarLanderContinuous-v3");
  auto b = recur::envs::make("LunarLanderContinuous-v3");
  const auto oa = a->reset(9);
  const auto ob = b->reset(9);
  CHECK(std::equal(oa.begin(), oa.end(), ob.begin()));
  const float wide[2] = {5.0f, -7.0f}, edge[2] = {1.0f, -1.0f};
  for (int t = 0; t < 20; ++t) {
    const auto ra = a->step(wide);
    const std::vector<float> obs_a(ra.obs.begin(), ra.obs.end());
    const auto rb = b->step(edge);
    CHECK(std::equal(obs_a.begin(), obs_a.end(), rb.obs.begin()));
    CHECK(ra.reward == rb.reward);
    if (ra.done()) break;
  }
  const std::vector<float> o9(a->reset(9).begin(), a->reset(9).end());
  const auto o10 = a->reset(10);
  CHECK_FALSE(std::equal(o9.begin(), o9.end(), o10.begin()));
}

TEST_CASE("LunarLander env: steady-state steps make no heap allocation") {
  if (!recur::test::AllocationCounter::available()) {
    recur::test::skip("allocation counting is off in sanitizer builds");
    return;
  }
  // Whole heuristic episodes (flight, touchdown with new contacts, rest) after the reset; the
  // world itself is made by reset. Box2D's own memory (contacts, stack) goes through b2Alloc =
  // malloc, which this counter does not see: see envs/box2d/lunar_lander_sim.h.
  for (const char* id : {"LunarLander-v3", "LunarLanderContinuous-v3"}) {
    CAPTURE(id);
    auto env = recur::envs::make(id, recur::Options{}.set("enable_wind", "true"));
    auto controller = recur::envs::make_heuristic(id);
    std::vector<float> action(static_cast<size_t>(env->action_dim()));
    int steps = 0;
    size_t allocations = 0;
    for (uint64_t seed = 0; seed < 3; ++seed) {
      auto obs = env->reset(seed);
      recur::test::AllocationCounter counter;
      for (bool done = false; !done; ++steps) {
        controller->act(obs, action);
        const auto r = env->step(action);
        obs = r.obs;
        done = r.done();
      }
      allocations += counter.count();
    }
    CHECK(steps > 300);
    CHECK(allocations == 0);
  }
}
