// BipedalWalker as a recur Env: registration, options, determinism per seed (a new world every
// reset), Gymnasium's action handling (sign and clipped |a|, no refusal outside the box), the
// reset observation, the picture, and no heap allocation per step in the steady state.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "core/rng.h"
#include "envs/box2d/bipedal_walker.h"
#include "envs/registry.h"
#include "envs/render/canvas.h"
#include "tests/support/alloc_counter.h"
#include "tests/support/skip.h"

namespace {

std::vector<float> run(recur::envs::Env& env, uint64_t seed, int steps, double* total = nullptr) {
  std::vector<float> trace(env.reset(seed).begin(), env.reset(seed).end());
  recur::Rng rng(seed + 100);
  double sum = 0;
  for (int t = 0; t < steps && !env.needs_reset(); ++t) {
    float a[4];
    for (float& x : a) x = static_cast<float>(rng.uniform(-1, 1));
    const auto r = env.step(a);
    trace.insert(trace.end(), r.obs.begin(), r.obs.end());
    trace.push_back(static_cast<float>(r.reward));
    sum += r.reward;
  }
  if (total) *total = sum;
  return trace;
}

}  // namespace

TEST_CASE("BipedalWalker ids are registered as Gymnasium's") {
  const auto& reg = recur::envs::registry();
  CHECK(reg.at("BipedalWalker-v3").max_episode_steps == 1600);
  CHECK(*reg.at("BipedalWalker-v3").reward_threshold == 300.0);
  CHECK(reg.at("BipedalWalkerHardcore-v3").max_episode_steps == 2000);
  CHECK(*reg.at("BipedalWalkerHardcore-v3").reward_threshold == 300.0);
  CHECK(reg.at("BipedalWalker-v3").family == "box2d");
  // rl-baselines3-zoo has no velocity mask for BipedalWalker: no NoVel twin.
  CHECK(reg.find("BipedalWalkerNoVel-v3") == nullptr);

  auto env = recur::envs::make("BipedalWalker-v3");
  CHECK(env->obs_dim() == 24);
  CHECK(env->action_dim() == 4);
  CHECK(env->state_size() == 0);
  const auto& normal = dynamic_cast<const recur::envs::BipedalWalker&>(*env);
  CHECK_FALSE(normal.config().hardcore);
  auto hard = recur::envs::make("BipedalWalkerHardcore-v3");
  CHECK(dynamic_cast<const recur::envs::BipedalWalker&>(*hard).config().hardcore);
  auto opt = recur::envs::make("BipedalWalker-v3", recur::Options{}.set("hardcore", "true"));
  const auto& w = dynamic_cast<const recur::envs::BipedalWalker&>(*opt);
  CHECK(w.config().hardcore);
  opt->reset(3);
  CHECK(!w.physics().terrain().obstacles.empty());
}

TEST_CASE("BipedalWalker: a seed names one episode, seeds differ") {
  for (const char* id : {"BipedalWalker-v3", "BipedalWalkerHardcore-v3"}) {
    CAPTURE(id);
    auto a = recur::envs::make(id);
    auto b = recur::envs::make(id);
    const auto ta = run(*a, 9, 200);
    run(*b, 4, 50);  // another episode first: a new world per reset leaves no trace
    CHECK(run(*b, 9, 200) == ta);
    CHECK(run(*b, 10, 200) != ta);
  }
}

TEST_CASE("BipedalWalker: actions use sign and clipped magnitude, as Gymnasium's") {
  auto a = recur::envs::make("BipedalWalker-v3");
  auto b = recur::envs::make("BipedalWalker-v3");
  a->reset(2);
  b->reset(2);
  const float wide[4] = {2.0f, -3.0f, 1.5f, -1.0f};
  const float box[4] = {1.0f, -1.0f, 1.0f, -1.0f};
  for (int t = 0; t < 30; ++t) {
    const auto ra = a->step(wide);
    const std::vector<float> obs_a(ra.obs.begin(), ra.obs.end());
    const auto rb = b->step(box);
    CHECK(std::vector<float>(rb.obs.begin(), rb.obs.end()) == obs_a);
    CHECK(ra.reward == rb.reward);
  }
}

TEST_CASE("BipedalWalker reset: the observation of one zero-action step") {
  auto env = recur::envs::make("BipedalWalker-v3");
  const auto obs = env->reset(0);
  const auto& w = dynamic_cast<const recur::envs::BipedalWalker&>(*env);
  float want[24];
  recur::envs::bipedal::observe(w.physics().state(), want);
  for (size_t i = 0; i < 24; ++i) CHECK(obs[i] == want[i]);
  // The walker starts at x = 4.667 on the flat start pad; lidar rays see the ground.
  CHECK(w.physics().state().x == doctest::Approx(14 / 30.0 * 10).epsilon(1e-3));
  for (size_t i = 14; i < 24; ++i) {
    CHECK(obs[i] > 0);
    CHECK(obs[i] <= 1);
  }
  CHECK(obs[14] < 1);  // the straight-down ray hits the pad
  CHECK_FALSE(w.physics().game_over());
}

TEST_CASE("BipedalWalker draws Gymnasium's scene") {
  auto env = recur::envs::make("BipedalWalkerHardcore-v3");
  const auto info = env->render_info();
  CHECK(info.width == 600);
  CHECK(info.height == 400);
  CHECK(info.fps == 50);
  env->reset(1);
  const float walk[4] = {0.6f, -0.4f, -0.6f, -0.4f};
  for (int t = 0; t < 10; ++t) env->step(walk);  // legs apart; lidar ray 11 (= ray 8)
  recur::envs::render::Canvas canvas(600, 400);
  env->draw(canvas);
  const auto& f = canvas.frame();
  auto count = [&](recur::envs::render::Color c) {
    int n = 0;
    for (int y = 0; y < f.height; ++y)
      for (int x = 0; x < f.width; ++x) {
        const uint8_t* p = f.at(x, y);
        n += p[0] == c.r && p[1] == c.g && p[2] == c.b;
      }
    return n;
  };
  int reddish = 0;  // the 1 px antialiased lidar ray
  for (int y = 0; y < f.height; ++y)
    for (int x = 0; x < f.width; ++x) {
      const uint8_t* p = f.at(x, y);
      reddish += p[0] > 200 && p[1] < 150 && p[2] < 150;
    }
  CHECK(count({215, 215, 255}) > 60000);  // sky
  CHECK(count({102, 153, 76}) > 30000);   // grass below the terrain line (y ~ 100 px)
  CHECK(count({127, 51, 229}) > 500);     // hull
  CHECK(count({178, 101, 152}) > 100);    // near leg
  CHECK(count({128, 51, 102}) > 100);     // far leg
  CHECK(count({230, 51, 0}) > 50);        // start flag
  CHECK(reddish > 20);                    // the lidar ray
  // The grass sits at the bottom, the sky at the top, edge to edge.
  for (int x = 0; x < 600; x += 25) {
    CHECK(f.at(x, 399)[1] == 153);
    CHECK(f.at(x, 0)[2] == 255);
  }
}

// tests/support/alloc_counter.h counts operator new; Box2D allocates through b2Alloc (malloc),
// which it does not see. Box2D's malloc calls were measured separately (bipedal_walker_physics.h:
// none per step); this test guards recur's own code and the world's C++ side.
TEST_CASE("BipedalWalker: no heap allocation per step in the steady state") {
  if (!recur::test::AllocationCounter::available()) {
    recur::test::skip("allocation counting is off in sanitizer builds");
    return;
  }
  auto env = recur::envs::make("BipedalWalker-v3");
  env->reset(2);
  size_t reset_allocations = 0;
  {
    recur::test::AllocationCounter counter;
    env->reset(3);  // a new world: allocates, once per episode
    reset_allocations = counter.count();
  }
  MESSAGE(reset_allocations << " allocations in a reset");
  const float walk[2][4] = {{0.6f, -0.4f, -0.6f, -0.4f}, {-0.6f, -0.4f, 0.6f, -0.4f}};
  // Warm up: Box2D's block and stack allocators and the broad-phase buffers grow during the
  // first contacts, then reuse their memory.
  for (int t = 0; t < 100 && !env->needs_reset(); ++t) env->step(walk[(t / 15) % 2]);
  REQUIRE_FALSE(env->needs_reset());
  int steps = 0;
  size_t allocations = 0;
  {
    recur::test::AllocationCounter counter;
    for (int t = 100; t < 400 && !env->needs_reset(); ++t, ++steps) env->step(walk[(t / 15) % 2]);
    allocations = counter.count();
  }
  MESSAGE(allocations << " allocations in " << steps << " steps");
  CHECK(steps >= 100);
  CHECK(allocations == 0);
}
