// LunarLander's arithmetic outside the Box2D solver, as pure functions of given numbers, so that
// tests can feed them Gymnasium's recorded draws and body states and compare exactly
// (tests/envs/box2d/lunar_lander_exact_test.cc). Every expression keeps Gymnasium's float64
// evaluation order (gymnasium/envs/box2d/lunar_lander.py; docs/BOX2D.md, "Parity").
#pragma once

#include <array>
#include <optional>
#include <span>

namespace recur::envs::lunar_lander {

inline constexpr int kFps = 50;
inline constexpr double kScale = 30.0;  // px per m (Gymnasium's SCALE)
inline constexpr double kMainEnginePower = 13.0;
inline constexpr double kSideEnginePower = 0.6;
inline constexpr double kInitialRandom = 1000.0;  // N, bound of the initial force draws
inline constexpr double kLegAway = 20, kLegDown = 18, kLegW = 2, kLegH = 8;  // px
inline constexpr double kLegSpringTorque = 40;                               // N m
inline constexpr double kSideEngineHeight = 14, kSideEngineAway = 12;        // px
inline constexpr double kMainEngineYLocation = 4;                            // px
inline constexpr int kViewportW = 600, kViewportH = 400;                     // px
inline constexpr double kW = kViewportW / kScale;                            // 20 m
inline constexpr double kH = kViewportH / kScale;                            // 13.333 m
inline constexpr int kChunks = 11;
inline constexpr int kVelocityIterations = 6 * 30, kPositionIterations = 2 * 30;

// The terrain of one episode: 11 points joined by 10 edges, and the helipad between the flags.
struct Terrain {
  std::array<double, kChunks> chunk_x{};   // m
  std::array<double, kChunks> smooth_y{};  // m
  double helipad_x1 = 0, helipad_x2 = 0, helipad_y = 0;
};

// From the 12 draws uniform(0, H/2): heights 3..7 become the helipad's, then each point is
// 0.33 * (sum of 3 neighbours) -- 0.33, not 1/3, so the helipad sits at 3.3, not at H/4 -- with
// height[-1] being Python's last element, height[11].
Terrain make_terrain(std::span<const double, kChunks + 1> heights);

// What the observation and reward read from Box2D after a step (float32 values widened to
// double, as pybox2d hands them to Python).
struct BodyState {
  double x = 0, y = 0;    // lander position (body origin) [m]
  double vx = 0, vy = 0;  // linear velocity [m/s]
  double angle = 0;       // [rad]
  double omega = 0;       // angular velocity [rad/s]
  bool leg_contact[2] = {false, false};
};

// Gymnasium's `state` list, in float64; the observation is it rounded to float32.
using State = std::array<double, 8>;
State make_state(const BodyState& body, double helipad_y);

// -100 |pos| - 100 |vel| - 100 |angle| + 10 per leg in contact, from the float64 state.
double shaping(const State& s);

// Engine throttles from an action: main and side each 0 (off) or in [0.5, 1]; the side engine's
// direction is -1 (discrete action 1, or a1 < -0.5) or +1 (action 3, or a1 > 0.5). Continuous
// actions are clipped to [-1, 1] first; discrete actions are 0..3.
struct Throttle {
  double main = 0;
  double side = 0;
  double direction = 0;
};
Throttle throttle(std::span<const float> action, bool continuous);

// An impulse [N s] applied at a world point [m] (both already in Box2D's float32).
struct Impulse {
  float px = 0, py = 0;  // point
  float ix = 0, iy = 0;  // impulse
};
// The engines' impulses on the lander for body origin (x, y), angle and the dispersion draws
// u0, u1 ~ U(-1, 1) (divided by SCALE here). Both are applied at the body origin offset, not at
// the centre of mass; the side engine keeps Gymnasium's 17-vs-14 bug (orientation-dependent
// torque).
Impulse main_engine_impulse(double x, double y, double angle, double u0, double u1, double power);
Impulse side_engine_impulse(double x, double y, double angle, double u0, double u1, double power,
                            double direction);

// The wind force [N] and turbulence torque [N m] for index k: tanh(sin(0.02 k) + sin(0.01 pi k))
// times the power.
double wind_signal(int index, double power);

// The reward of a step and whether it terminates, in Gymnasium's order: shaping difference (0
// without a previous shaping), minus main * 0.30, minus side * 0.03 (two subtractions), then -100
// on a crash (game_over or |s0| >= 1), then +100 when the lander sleeps (replaces, wins).
struct Outcome {
  double reward = 0;
  bool terminated = false;
};
Outcome reward_and_termination(std::optional<double> prev_shaping, double shaping,
                               const Throttle& throttle, bool game_over, double s0, bool awake);

}  // namespace recur::envs::lunar_lander
