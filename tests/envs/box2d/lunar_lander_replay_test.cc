// LunarLander, layer (b): Gymnasium's reset draws (terrain heights, initial force, wind indices)
// and per-step dispersion draws replayed in recur's Box2D 2.4.1 physics for the first 20 steps of
// fixed action sequences (discrete, continuous with out-of-range values, other gravity, wind).
// The lander's position, velocity, angle and angular velocity must follow Gymnasium's.
//
// Why tolerances at all: Box2D 2.4.1 is not pybox2d's 2.3 (joint limits, gravity integration and
// polygon mass rounding differ: docs/BOX2D.md, "Why not bit for bit"), so the bodies differ by
// float32 rounding from the first step. Measured worst over these 10 episodes x 20 steps (Gymnasium
// 1.4.0, box2d 2.3.10): position 1.3e-5 m, velocity 1.7e-4 m/s, angle 4.3e-5 rad, angular
// velocity 6.0e-4 rad/s. The tolerances below are 8-15x those. Each of these mutations, made
// by hand, failed this test (hundreds of failed checks, most from step 0-2): main engine power
// 13 -> 12.5, main engine offset 4 -> 3 px, side engine height 14 -> 17 px, side engine away
// 12 -> 11 px, impulses at the centre of mass instead of the body origin, referenceAngle 0,
// legs created at angle 0, leg anchor 18 -> 17 px, hull density 5 -> 4.9, leg motor speed 0,
// dispersions ignored, initial force x/y swapped, solver iterations 180/60 -> 8/3. Not visible
// here (angles stay < 0.05 rad, legs never touch): the side engine's 17-vs-14 x offset and the
// leg friction, which lunar_lander_exact_test.cc checks directly.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "envs/box2d/lunar_lander.h"
#include "tests/envs/box2d/lunar_lander_golden.h"

namespace {
namespace ll = recur::envs::lunar_lander;
using recur::test::lunar_lander::GoldenEpisode;
using recur::test::lunar_lander::GoldenStep;

constexpr int kSteps = 20;
// Absolute, per quantity: position [m], velocity [m/s], angle [rad], angular velocity [rad/s].
constexpr double kPosTol = 2e-4, kVelTol = 2e-3, kAngleTol = 5e-4, kOmegaTol = 5e-3;

struct MaxErr {
  double pos = 0, vel = 0, angle = 0, omega = 0;
};

void compare(const ll::BodyState& got, const GoldenStep& want, MaxErr& m) {
  const double pos = std::max(std::abs(got.x - want.body.x), std::abs(got.y - want.body.y));
  const double vel = std::max(std::abs(got.vx - want.body.vx), std::abs(got.vy - want.body.vy));
  const double angle = std::abs(got.angle - want.body.angle);
  const double omega = std::abs(got.omega - want.body.omega);
  CHECK(pos <= kPosTol);
  CHECK(vel <= kVelTol);
  CHECK(angle <= kAngleTol);
  CHECK(omega <= kOmegaTol);
  CHECK(got.leg_contact[0] == want.body.leg_contact[0]);
  CHECK(got.leg_contact[1] == want.body.leg_contact[1]);
  m.pos = std::max(m.pos, pos);
  m.vel = std::max(m.vel, vel);
  m.angle = std::max(m.angle, angle);
  m.omega = std::max(m.omega, omega);
}

}  // namespace

TEST_CASE("LunarLander replay: Gymnasium's draws give Gymnasium's first 20 steps") {
  const auto episodes = recur::test::lunar_lander::read_trajectories();
  int replayed = 0;
  MaxErr worst;
  for (const GoldenEpisode& e : episodes) {
    if (e.name.find("cycle") == std::string::npos && e.name.find("wind") == std::string::npos)
      continue;
    CAPTURE(e.name);
    REQUIRE(e.steps.size() >= kSteps);
    ll::Sim sim(e.config);
    sim.build(e.draws);
    const float noop[2] = {0, 0};
    MaxErr m;
    sim.step(noop, e.reset.u0, e.reset.u1);
    compare(sim.body(), e.reset, m);
    for (int t = 0; t < kSteps; ++t) {
      CAPTURE(t);
      const GoldenStep& s = e.steps[static_cast<size_t>(t)];
      const ll::Outcome out = sim.step(s.action, s.u0, s.u1);
      compare(sim.body(), s, m);
      CHECK(out.terminated == s.terminated);
      // The reward is a difference of shapings of nearby states plus exact engine costs.
      CHECK_MESSAGE(std::abs(out.reward - s.reward) <= 0.1, out.reward << " vs " << s.reward);
    }
    if (std::getenv("RECUR_TEST_VERBOSE"))
      std::printf("%-20s max |d| pos %.2e vel %.2e angle %.2e omega %.2e\n", e.name.c_str(), m.pos,
                  m.vel, m.angle, m.omega);
    worst = {std::max(worst.pos, m.pos), std::max(worst.vel, m.vel), std::max(worst.angle, m.angle),
             std::max(worst.omega, m.omega)};
    ++replayed;
  }
  CHECK(replayed == 10);
  MESSAGE("LunarLander replay, worst over "
          << replayed << " episodes x " << kSteps << " steps: pos " << worst.pos << " vel "
          << worst.vel << " angle " << worst.angle << " omega " << worst.omega);
}

TEST_CASE("LunarLander replay: the env's replayed reset is the Sim's build + no-op step") {
  const auto episodes = recur::test::lunar_lander::read_trajectories();
  const GoldenEpisode& e = episodes.front();
  recur::envs::LunarLanderConfig c;
  c.continuous = e.continuous;
  recur::envs::LunarLander env(c);
  env.replay_next_reset(e.draws, e.reset.u0, e.reset.u1);
  const auto obs = env.reset(1);
  ll::Sim sim(e.config);
  sim.build(e.draws);
  const float noop[2] = {0, 0};
  sim.step(noop, e.reset.u0, e.reset.u1);
  CHECK(env.sim().state() == sim.state());
  CHECK(env.sim().prev_shaping() == sim.prev_shaping());
  for (int i = 0; i < 8; ++i) CHECK(obs[i] == static_cast<float>(sim.state()[i]));
  // The replay is used once: the next reset draws again.
  env.reset(1);
  CHECK(env.sim().state() != sim.state());
}
