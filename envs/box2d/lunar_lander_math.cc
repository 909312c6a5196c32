#include "envs/box2d/lunar_lander_math.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace recur::envs::lunar_lander {

Terrain make_terrain(std::span<const double, kChunks + 1> heights) {
  Terrain t;
  std::array<double, kChunks + 1> h;
  std::copy(heights.begin(), heights.end(), h.begin());
  for (int i = 0; i < kChunks; ++i) t.chunk_x[i] = kW / (kChunks - 1) * i;
  t.helipad_x1 = t.chunk_x[kChunks / 2 - 1];
  t.helipad_x2 = t.chunk_x[kChunks / 2 + 1];
  t.helipad_y = kH / 4;
  for (int i = kChunks / 2 - 2; i <= kChunks / 2 + 2; ++i) h[i] = t.helipad_y;
  for (int i = 0; i < kChunks; ++i) {
    const double before = h[i == 0 ? kChunks : i - 1];  // Python's height[-1]
    t.smooth_y[i] = 0.33 * (before + h[i] + h[i + 1]);
  }
  return t;
}

State make_state(const BodyState& b, double helipad_y) {
  // Gymnasium's expressions, left to right (VIEWPORT_W / SCALE / 2 etc. are exact doubles).
  return {(b.x - kViewportW / kScale / 2) / (kViewportW / kScale / 2),
          (b.y - (helipad_y + kLegDown / kScale)) / (kViewportH / kScale / 2),
          b.vx * (kViewportW / kScale / 2) / kFps,
          b.vy * (kViewportH / kScale / 2) / kFps,
          b.angle,
          20.0 * b.omega / kFps,
          b.leg_contact[0] ? 1.0 : 0.0,
          b.leg_contact[1] ? 1.0 : 0.0};
}

double shaping(const State& s) {
  return -100 * std::sqrt(s[0] * s[0] + s[1] * s[1]) - 100 * std::sqrt(s[2] * s[2] + s[3] * s[3]) -
         100 * std::abs(s[4]) + 10 * s[6] + 10 * s[7];
}

Throttle throttle(std::span<const float> action, bool continuous) {
  Throttle t;
  if (continuous) {
    // np.clip(action, -1, +1).astype(np.float64): clipped in float32, then widened.
    const double a0 = std::clamp(action[0], -1.0f, 1.0f);
    const double a1 = std::clamp(action[1], -1.0f, 1.0f);
    if (a0 > 0.0) t.main = (std::clamp(a0, 0.0, 1.0) + 1.0) * 0.5;
    if (std::abs(a1) > 0.5) {
      t.direction = a1 > 0 ? 1.0 : -1.0;
      t.side = std::clamp(std::abs(a1), 0.5, 1.0);
    }
  } else {
    const int a = static_cast<int>(action[0]);
    if (a == 2) t.main = 1.0;
    if (a == 1 || a == 3) {
      t.direction = a - 2;
      t.side = 1.0;
    }
  }
  return t;
}

Impulse main_engine_impulse(double x, double y, double angle, double u0, double u1, double power) {
  const double tip[2] = {std::sin(angle), std::cos(angle)};
  const double side[2] = {-tip[1], tip[0]};
  const double d0 = u0 / kScale, d1 = u1 / kScale;
  const double ox = tip[0] * (kMainEngineYLocation / kScale + 2 * d0) + side[0] * d1;
  const double oy = -tip[1] * (kMainEngineYLocation / kScale + 2 * d0) - side[1] * d1;
  return {static_cast<float>(x + ox), static_cast<float>(y + oy),
          static_cast<float>(-ox * kMainEnginePower * power),
          static_cast<float>(-oy * kMainEnginePower * power)};
}

Impulse side_engine_impulse(double x, double y, double angle, double u0, double u1, double power,
                            double direction) {
  const double tip[2] = {std::sin(angle), std::cos(angle)};
  const double side[2] = {-tip[1], tip[0]};
  const double d0 = u0 / kScale, d1 = u1 / kScale;
  const double ox = tip[0] * d0 + side[0] * (3 * d1 + direction * kSideEngineAway / kScale);
  const double oy = -tip[1] * d0 - side[1] * (3 * d1 + direction * kSideEngineAway / kScale);
  // 17, not SIDE_ENGINE_HEIGHT (14), in x: Gymnasium's documented bug, kept.
  return {static_cast<float>(x + ox - tip[0] * 17 / kScale),
          static_cast<float>(y + oy + tip[1] * kSideEngineHeight / kScale),
          static_cast<float>(-ox * kSideEnginePower * power),
          static_cast<float>(-oy * kSideEnginePower * power)};
}

double wind_signal(int index, double power) {
  const double k = index;
  return std::tanh(std::sin(0.02 * k) + std::sin(std::numbers::pi * 0.01 * k)) * power;
}

Outcome reward_and_termination(std::optional<double> prev_shaping, double shaping,
                               const Throttle& throttle, bool game_over, double s0, bool awake) {
  Outcome out;
  if (prev_shaping) out.reward = shaping - *prev_shaping;
  out.reward -= throttle.main * 0.30;
  out.reward -= throttle.side * 0.03;
  if (game_over || std::abs(s0) >= 1.0) {
    out.terminated = true;
    out.reward = -100;
  }
  if (!awake) {
    out.terminated = true;
    out.reward = +100;
  }
  return out;
}

}  // namespace recur::envs::lunar_lander
