// BipedalWalker observation, reward and termination (exact layer). Gymnasium's step was recorded
// with the raw Box2D values it read (tests/data/box2d/bipedal_walker/short_horizon.txt); recur's
// functions of those values must give Gymnasium's observation and reward:
//   * observation: bit-identical float32 (both compute in float64 from the same floats and round
//     once);
//   * reward: Gymnasium's is float32 for the float32 actions recorded (NumPy 2, NEP 50) and
//     recur's float64, so they agree to float32 rounding: |diff| <= 1e-6 max(1, |r|).
#include <doctest/doctest.h>

#include <cmath>

#include "envs/box2d/bipedal_walker_physics.h"
#include "tests/envs/box2d/bipedal_walker_golden.h"

namespace bw = recur::envs::bipedal;

TEST_CASE("BipedalWalker observation and reward from Gymnasium's raw Box2D values") {
  const auto episodes = bw_test::read_short_horizon();
  REQUIRE(episodes.size() == 9);
  int steps = 0, contacts = 0, lidar_hits = 0, terminated = 0, exact_rewards = 0;
  for (const auto& e : episodes) {
    CAPTURE(e.seed);
    CAPTURE(e.program);
    float obs[bw::kObsDim];
    bw::observe(e.reset_raw.state(), obs);
    for (size_t i = 0; i < bw::kObsDim; ++i) CHECK(obs[i] == static_cast<float>(e.reset_obs[i]));

    double prev = bw::shaping(e.reset_raw.state());
    for (const auto& s : e.steps) {
      const bw::WalkerState st = s.raw.state();
      bw::observe(st, obs);
      for (size_t i = 0; i < bw::kObsDim; ++i) {
        CAPTURE(i);
        CHECK(obs[i] == static_cast<float>(s.obs[i]));
      }
      const std::vector<float> action(s.action.begin(), s.action.end());
      const double shaping = bw::shaping(st);
      // Gymnasium learns game over from its contact listener, which the raw values do not
      // carry: a -100 step with x >= 0 was a game over.
      const bool game_over = s.terminated && s.reward == -100 && st.x >= 0;
      const bw::StepReward r =
          bw::finish(bw::subtract_torque_cost(shaping - prev, action), game_over, st.x);
      prev = shaping;
      CHECK(std::abs(r.reward - s.reward) <= 1e-6 * std::max(1.0, std::abs(s.reward)));
      exact_rewards += static_cast<float>(r.reward) == static_cast<float>(s.reward);
      CHECK(r.terminated == s.terminated);
      ++steps;
      contacts += st.contact[0] + st.contact[1];
      for (double f : st.lidar) lidar_hits += f < 1;
      terminated += s.terminated;
    }
  }
  MESSAGE(steps << " steps, " << exact_rewards << " rewards equal after rounding to float32");
  // The data covers what the functions read: contacts, lidar hits and terminations.
  CHECK(steps > 200);
  CHECK(contacts > 50);
  CHECK(lidar_hits > 500);
  CHECK(terminated >= 1);
}

TEST_CASE("BipedalWalker torque cost clips |a| and subtracts per joint, in float64") {
  const float a[4] = {0.5f, -0.25f, 2.0f, -3.0f};
  // 0.00035 * 80 = 0.028 per unit of clipped |a|, one subtraction per entry (Gymnasium's loop).
  double want = 1.0;
  for (double c : {0.5, 0.25, 1.0, 1.0}) want -= 0.00035 * 80 * c;
  CHECK(bw::subtract_torque_cost(1.0, a) == want);
  const float zero[4] = {0, 0, 0, 0};
  CHECK(bw::subtract_torque_cost(0.25, zero) == 0.25);
}

TEST_CASE("BipedalWalker shaping and termination") {
  bw::WalkerState s;
  s.x = 3.0;
  s.angle = -0.2;
  CHECK(bw::shaping(s) == doctest::Approx(130 * 3.0 / 30 - 5 * 0.2).epsilon(1e-15));

  const double finish_x = (200 - 10) * (14 / 30.0);
  CHECK(bw::kFinishX == finish_x);
  // Running: the reward passes through.
  auto r = bw::finish(0.7, false, 10);
  CHECK(r.reward == 0.7);
  CHECK_FALSE(r.terminated);
  // Game over or walking off the left end: -100, terminated.
  r = bw::finish(0.7, true, 10);
  CHECK(r.reward == -100);
  CHECK(r.terminated);
  r = bw::finish(0.7, false, -0.01);
  CHECK(r.reward == -100);
  CHECK(r.terminated);
  CHECK_FALSE(bw::finish(0.7, false, 0.0).terminated);  // x < 0, not <= 0
  // The finish: terminated, no bonus; exactly at the line is not past it.
  r = bw::finish(0.7, false, finish_x + 1e-9);
  CHECK(r.reward == 0.7);
  CHECK(r.terminated);
  CHECK_FALSE(bw::finish(0.7, false, finish_x).terminated);
  // A fall past the finish still costs 100.
  r = bw::finish(0.7, true, finish_x + 1);
  CHECK(r.reward == -100);
  CHECK(r.terminated);
}
