// LunarLander, layer (c): statistics. Gymnasium's heuristic controller, ported
// (envs/box2d/lunar_lander_heuristic.cc), must score in recur as in Gymnasium: the mean return over
// fresh-seed episodes is compared with Gymnasium's over 1000 episodes
// (tests/data/box2d/lunar_lander/heuristic.txt, tests/data/box2d/lunar_lander/generate.py) by a
// two-sample z test: |mean_recur - mean_gym| < 4 sqrt(s_recur^2 / n_recur + s_gym^2 / n_gym), a
// false alarm rate of 6e-5 when the two means are equal. Episode count: see episodes().
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "envs/box2d/heuristic.h"
#include "envs/registry.h"
#include "tests/envs/box2d/lunar_lander_golden.h"

namespace {

struct Sample {
  double mean = 0, std = 0;
  int n = 0;
};

Sample golden(const std::string& mode) {
  const std::string path = recur::test::lunar_lander::data_dir() + "/heuristic.txt";
  std::ifstream file(path);
  REQUIRE_MESSAGE(file.good(), "missing golden file " << path);
  for (std::string line; std::getline(file, line);) {
    std::istringstream in(line);
    std::string m;
    Sample s;
    if (in >> m >> s.mean >> s.std >> s.n && m == mode) return s;
  }
  FAIL("no line for " << mode << " in " << path);
  return {};
}

// The heuristic's returns over `episodes` episodes, seeds first_seed, first_seed + 1, ...
Sample run_heuristic(const std::string& id, int episodes, uint64_t first_seed) {
  auto env = recur::envs::make(id);
  auto controller = recur::envs::make_heuristic(id);
  REQUIRE(controller != nullptr);
  std::vector<float> action(static_cast<size_t>(env->action_dim()));
  double sum = 0, sum_sq = 0;
  for (int k = 0; k < episodes; ++k) {
    auto obs = env->reset(first_seed + static_cast<uint64_t>(k));
    controller->reset();
    double ret = 0;
    for (;;) {
      controller->act(obs, action);
      const auto r = env->step(action);
      ret += r.reward;
      obs = r.obs;
      if (r.done()) break;
    }
    sum += ret;
    sum_sq += ret * ret;
  }
  Sample s;
  s.n = episodes;
  s.mean = sum / episodes;
  s.std = std::sqrt((sum_sq - episodes * s.mean * s.mean) / (episodes - 1));
  return s;
}

// 500 episodes per mode: ~3 s for both in a Release build on this 2-core machine (1000 took
// 5.5 s under load). The z test then detects a shift of the discrete mean by
// ~4 * sqrt(100^2/500 + 106^2/1000) = 23 points, of the continuous one by ~5 points.
// RECUR_LL_HEURISTIC_EPISODES overrides it (e.g. 1000 for the report's figure).
int episodes() {
  const char* n = std::getenv("RECUR_LL_HEURISTIC_EPISODES");
  return n && *n ? std::atoi(n) : 500;
}

}  // namespace

TEST_CASE("LunarLander heuristic: recur's returns match Gymnasium's (two-sample z test)") {
  for (const auto& [id, mode] : {std::pair{"LunarLander-v3", "discrete"},
                                 std::pair{"LunarLanderContinuous-v3", "continuous"}}) {
    CAPTURE(id);
    const Sample gym = golden(mode);
    REQUIRE(gym.n >= 1000);
    const Sample recur_s = run_heuristic(id, episodes(), 1);
    const double se = std::sqrt(recur_s.std * recur_s.std / recur_s.n + gym.std * gym.std / gym.n);
    MESSAGE(std::string(id) << ": recur " << recur_s.mean << " +- " << recur_s.std
                            << " (n=" << recur_s.n << "), Gymnasium " << gym.mean << " +- "
                            << gym.std << " (n=" << gym.n
                            << "), |d| / se = " << std::abs(recur_s.mean - gym.mean) / se);
    CHECK(std::abs(recur_s.mean - gym.mean) < 4 * se);
    CHECK(recur_s.mean > 200);  // the controller lands: the env is solvable as Gymnasium's
  }
}

TEST_CASE("LunarLander heuristic: the controller is Gymnasium's function of the observation") {
  auto discrete = recur::envs::make_lunar_lander_heuristic(false);
  auto continuous = recur::envs::make_lunar_lander_heuristic(true);
  float a[1], c[2];
  // Falling fast above the pad: main engine (hover_todo = -0.1 + 0.25 = 0.15).
  const float falling[8] = {0, 0.2f, 0, -0.5f, 0, 0, 0, 0};
  discrete->act(falling, a);
  CHECK(a[0] == 2);
  continuous->act(falling, c);
  CHECK(c[0] == 1.0f);  // clip(0.15 * 20 - 1)
  // Tilted (angle 0.3) and barely falling: angle_todo = -0.15 wins, side engine +1.
  const float tilted[8] = {0, -0.2f, 0, 0, 0.3f, 0, 0, 0};
  discrete->act(tilted, a);
  CHECK(a[0] == 3);
  continuous->act(tilted, c);
  CHECK(c[1] == 1.0f);
  // Legs down: no turning, only braking the fall.
  const float landed[8] = {0.1f, 0, 0.2f, 0.02f, 0.3f, 0.1f, 1, 0};
  discrete->act(landed, a);
  CHECK(a[0] == 0);
  continuous->act(landed, c);
  CHECK(c[0] == -1.0f);
  CHECK(c[1] == 0.0f);
}

TEST_CASE("LunarLander heuristic: no heuristic for the NoVel ids") {
  CHECK(recur::envs::make_heuristic("LunarLanderNoVel-v3") == nullptr);
}
