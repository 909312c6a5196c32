// LunarLander, layer (a): everything outside the Box2D solver, exactly, against Gymnasium's
// recorded numbers (tests/data/box2d/lunar_lander/trajectories.txt): terrain from the height
// draws, the moon's edge vertices, observation and shaping from Gymnasium's own body states,
// reward (shaping difference, then the two engine costs) and termination priority, engine
// impulses, and the RNG draw counts of reset and step.
//
// Tolerances: observations must equal Gymnasium's float32 values (the float64 expressions are
// Gymnasium's, in its order; only libm vs numpy sqrt could differ, and sqrt is correctly rounded);
// shaping and reward to 1e-9 absolute (float64 sums of the same terms).
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>

#include "envs/box2d/lunar_lander.h"
#include "envs/box2d/lunar_lander_math.h"
#include "tests/envs/box2d/lunar_lander_golden.h"

namespace {
namespace ll = recur::envs::lunar_lander;
using recur::test::lunar_lander::GoldenEpisode;
using recur::test::lunar_lander::read_trajectories;

const std::vector<GoldenEpisode>& episodes() {
  static const std::vector<GoldenEpisode> e = read_trajectories();
  return e;
}
}  // namespace

TEST_CASE("LunarLander exact: terrain and helipad from Gymnasium's height draws") {
  REQUIRE(episodes().size() >= 10);
  for (const GoldenEpisode& e : episodes()) {
    CAPTURE(e.name);
    const ll::Terrain t = ll::make_terrain(e.draws.heights);
    REQUIRE(e.smooth_y.size() == 11);
    for (int i = 0; i < ll::kChunks; ++i) {
      CHECK(t.smooth_y[i] == e.smooth_y[i]);  // 0.33, height[-1] = height[11]: bit for bit
      CHECK(t.chunk_x[i] == doctest::Approx(2.0 * i).epsilon(1e-15));
    }
    CHECK(t.helipad_x1 == e.helipad[0]);
    CHECK(t.helipad_x2 == e.helipad[1]);
    CHECK(t.helipad_y == e.helipad[2]);
    CHECK(t.smooth_y[5] == doctest::Approx(3.3).epsilon(1e-15));  // not H/4 = 3.333

    // The edges Box2D holds (float32), in creation order: the floor, then the 10 terrain edges.
    ll::Sim sim(e.config);
    sim.build(e.draws);
    std::vector<double> vertices;
    for (const b2Fixture* f = sim.moon()->GetFixtureList(); f; f = f->GetNext()) {
      const auto* edge = static_cast<const b2EdgeShape*>(f->GetShape());
      vertices.insert(vertices.end(),
                      {edge->m_vertex1.x, edge->m_vertex1.y, edge->m_vertex2.x, edge->m_vertex2.y});
      CHECK(f->GetFriction() == doctest::Approx(f->GetNext() ? 0.1 : 0.2));
    }
    // Box2D 2.4 prepends fixtures to the body's list: reverse the order of 4-tuples.
    REQUIRE(vertices.size() == e.edge_vertices.size());
    const size_t n = vertices.size() / 4;
    for (size_t k = 0; k < n; ++k)
      for (size_t j = 0; j < 4; ++j)
        CHECK(vertices[4 * (n - 1 - k) + j] == e.edge_vertices[4 * k + j]);
  }
}

TEST_CASE("LunarLander exact: observation, shaping and reward from Gymnasium's body states") {
  int steps = 0, crashes = 0, rests = 0, contacts = 0;
  for (const GoldenEpisode& e : episodes()) {
    CAPTURE(e.name);
    const double helipad_y = ll::make_terrain(e.draws.heights).helipad_y;
    double prev = e.reset.prev_shaping;
    const auto check_state = [&](const recur::test::lunar_lander::GoldenStep& s) {
      const ll::State state = ll::make_state(s.body, helipad_y);
      for (int i = 0; i < 8; ++i) {
        CAPTURE(i);
        CHECK(static_cast<double>(static_cast<float>(state[i])) == s.obs[i]);
      }
      CHECK_MESSAGE(std::abs(ll::shaping(state) - s.prev_shaping) <= 1e-9,
                    ll::shaping(state) << " vs " << s.prev_shaping);
      return state;
    };
    check_state(e.reset);
    for (size_t t = 0; t < e.steps.size(); ++t) {
      CAPTURE(t);
      const auto& s = e.steps[t];
      const ll::State state = check_state(s);
      const ll::Throttle th = ll::throttle(s.action, e.continuous);
      const ll::Outcome out =
          ll::reward_and_termination(prev, ll::shaping(state), th, s.game_over, state[0], s.awake);
      CHECK_MESSAGE(std::abs(out.reward - s.reward) <= 1e-9, out.reward << " vs " << s.reward);
      CHECK(out.terminated == s.terminated);
      prev = s.prev_shaping;
      ++steps;
      crashes += s.terminated && s.reward == -100;
      rests += s.terminated && s.reward == 100;
      contacts += s.body.leg_contact[0] || s.body.leg_contact[1];
    }
  }
  // The data covers both endings and landed steps (leg terms in the shaping).
  CHECK(steps > 800);
  CHECK(crashes >= 3);
  CHECK(rests >= 2);
  CHECK(contacts >= 50);
}

TEST_CASE("LunarLander exact: reward order and termination priority") {
  const ll::Throttle both{0.75, 0.6, 1};
  // Shaping difference, then main * 0.30, then side * 0.03; 0 without a previous shaping.
  CHECK(ll::reward_and_termination(-50.0, -40.0, both, false, 0.2, true).reward ==
        ((-40.0 - -50.0) - 0.75 * 0.30) - 0.6 * 0.03);
  CHECK(ll::reward_and_termination(std::nullopt, -40.0, {}, false, 0.2, true).reward == 0.0);
  CHECK_FALSE(ll::reward_and_termination(-50.0, -40.0, both, false, 0.99, true).terminated);
  // Crash: game_over, or |s0| >= 1 (inclusive), replaces the reward by -100.
  for (const double s0 : {1.0, -1.0, 1.5}) {
    const auto out = ll::reward_and_termination(-50.0, -40.0, both, false, s0, true);
    CHECK(out.terminated);
    CHECK(out.reward == -100.0);
  }
  const auto crash = ll::reward_and_termination(-50.0, -40.0, both, true, 0.0, true);
  CHECK((crash.terminated && crash.reward == -100.0));
  // At rest: +100, which also wins over a crash on the same step.
  const auto rest = ll::reward_and_termination(-50.0, -40.0, both, false, 0.0, false);
  CHECK((rest.terminated && rest.reward == 100.0));
  const auto both_ends = ll::reward_and_termination(-50.0, -40.0, both, true, 1.2, false);
  CHECK((both_ends.terminated && both_ends.reward == 100.0));
}

TEST_CASE("LunarLander exact: throttles from actions") {
  const auto t = [](std::vector<float> a, bool continuous) { return ll::throttle(a, continuous); };
  CHECK(t({0}, false).main == 0);
  CHECK(t({0}, false).side == 0);
  CHECK(t({2}, false).main == 1);
  CHECK(t({1}, false).direction == -1);
  CHECK(t({3}, false).direction == 1);
  CHECK(t({3}, false).side == 1);
  CHECK(t({0.0f, 0.5f}, true).side == 0);  // |a1| > 0.5 strictly
  CHECK(t({0.0f, 0.0f}, true).main == 0);  // a0 > 0 strictly
  CHECK(t({0.5f, 0}, true).main == 0.75);
  CHECK(t({7.0f, -3.0f}, true).main == 1.0);  // clipped to [-1, 1] first
  CHECK(t({7.0f, -3.0f}, true).side == 1.0);
  CHECK(t({7.0f, -3.0f}, true).direction == -1);
  CHECK(t({-1.0f, 0.7f}, true).side == static_cast<double>(0.7f));
}

TEST_CASE("LunarLander exact: engine impulses at the body origin, with the 17-vs-14 offset") {
  // Upright, no dispersion: the main engine pushes straight up from 4 px below the origin.
  const ll::Impulse m = ll::main_engine_impulse(10, 8, 0, 0, 0, 1);
  CHECK(m.px == 10.0f);
  CHECK(m.py == static_cast<float>(8 - 4 / 30.0));
  CHECK(m.ix == 0.0f);
  CHECK(m.iy == static_cast<float>(13 * 4 / 30.0));
  // Side engine +1: 12 px to the left of the origin, 14 px up, pushing towards +x.
  const ll::Impulse s = ll::side_engine_impulse(10, 8, 0, 0, 0, 1, +1);
  CHECK(s.px == static_cast<float>(10 - 12 / 30.0));
  CHECK(s.py == static_cast<float>(8 + 14 / 30.0));
  CHECK(s.ix == static_cast<float>(12 / 30.0 * 0.6));
  CHECK(s.iy == doctest::Approx(0).scale(1e-7));
  // Turned by 90 degrees the x offset is 17 px (Gymnasium's bug), not 14.
  const ll::Impulse r = ll::side_engine_impulse(10, 8, std::numbers::pi / 2, 0, 0, 1, +1);
  CHECK(r.px == doctest::Approx(10 - 17 / 30.0).epsilon(1e-6));
  // Dispersion: u / 30, twice in the main engine's length.
  const ll::Impulse d = ll::main_engine_impulse(10, 8, 0, 0.5, 0.25, 0.5);
  CHECK(d.px == doctest::Approx(10 - 0.25 / 30).epsilon(1e-7));
  CHECK(d.iy == doctest::Approx((4 / 30.0 + 1 / 30.0) * 13 * 0.5).epsilon(1e-6));
}

TEST_CASE("LunarLander exact: wind signal and the RNG draws of reset and step") {
  CHECK(ll::wind_signal(0, 15) == 0.0);
  CHECK(ll::wind_signal(37, 15) ==
        std::tanh(std::sin(0.02 * 37) + std::sin(std::numbers::pi * 0.01 * 37)) * 15);

  // Reset: 12 heights + 2 force draws + the no-op step's 2 dispersions; every step 2 more.
  for (const bool wind : {false, true}) {
    CAPTURE(wind);
    recur::envs::LunarLanderConfig c;
    c.enable_wind = wind;
    recur::envs::LunarLander env(c);
    env.reset(7);
    recur::Rng ref(7);
    for (int i = 0; i < 12 + 2; ++i) ref.uniform();
    if (wind) {
      ref.uniform_int(19998);
      ref.uniform_int(19998);
    }
    ref.uniform();
    ref.uniform();
    CHECK(env.rng().state() == ref.state());
    const float a[1] = {0};
    env.step(a);
    ref.uniform();
    ref.uniform();
    CHECK(env.rng().state() == ref.state());
  }
}

TEST_CASE("LunarLander exact: bodies, fixtures and joints as Gymnasium creates them") {
  ll::Sim sim({});
  sim.build({});
  // Masses and inertia as pybox2d reports them (docs/BOX2D.md, "Gymnasium's behaviour, as
  // measured"); inertia about the body origin. Box2D 2.4 computes polygon mass about the first
  // vertex (2.3: the average): equal to float rounding.
  const b2Body* lander = sim.lander();
  CHECK(lander->GetMass() == doctest::Approx(4.8167).epsilon(1e-4));
  CHECK(lander->GetLocalCenter().y == doctest::Approx(0.10131).epsilon(1e-3));
  CHECK(lander->GetPosition().x == 10.0f);
  CHECK(lander->GetPosition().y == static_cast<float>(400 / 30.0));
  const b2Fixture* hull = lander->GetFixtureList();
  CHECK(hull->GetFriction() == 0.1f);
  CHECK(hull->GetRestitution() == 0.0f);
  CHECK(hull->GetFilterData().categoryBits == 0x0010);
  CHECK(hull->GetFilterData().maskBits == 0x0001);
  for (int k = 0; k < 2; ++k) {
    CAPTURE(k);
    const double i = k == 0 ? -1 : 1;
    const b2Body* leg = sim.leg(k);
    CHECK(leg->GetMass() == doctest::Approx(0.071111).epsilon(1e-4));
    CHECK(leg->GetPosition().x == static_cast<float>(10 - i * 20 / 30.0));
    CHECK(leg->GetAngle() == static_cast<float>(i * 0.05));
    const b2Fixture* f = leg->GetFixtureList();
    CHECK(f->GetFriction() == doctest::Approx(0.2));  // Box2D's default, as pybox2d's
    CHECK(f->GetFilterData().categoryBits == 0x0020);
    const auto* joint = static_cast<const b2RevoluteJoint*>(leg->GetJointList()->joint);
    CHECK(leg->GetJointList()->other == lander);
    CHECK(joint->GetReferenceAngle() == static_cast<float>(i * 0.05));
    CHECK(joint->GetLocalAnchorB().x == static_cast<float>(i * 20 / 30.0));
    CHECK(joint->GetLocalAnchorB().y == static_cast<float>(18 / 30.0));
    CHECK(joint->GetMotorSpeed() == static_cast<float>(0.3 * i));
    CHECK(joint->GetMaxMotorTorque() == 40.0f);
    CHECK(joint->GetLowerLimit() == (k == 0 ? 0.4f : -0.9f));
    CHECK(joint->GetUpperLimit() == (k == 0 ? 0.9f : -0.4f));
  }
}
