#include "envs/classic/pendulum.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "envs/render/canvas.h"

namespace recur::envs {
namespace {
constexpr double kMaxSpeed = 8;     // rad/s
constexpr float kMaxTorque = 2.0f;  // N m
constexpr double kDt = 0.05;        // s
constexpr double kMass = 1.0;       // kg
constexpr double kLength = 1.0;     // m

// ((x + pi) mod 2 pi) - pi with Python's floored modulo.
double angle_normalize(double x) {
  constexpr double kTwoPi = 2 * std::numbers::pi;
  double m = std::fmod(x + std::numbers::pi, kTwoPi);
  if (m != 0 && m < 0) m += kTwoPi;
  return m - std::numbers::pi;
}
}  // namespace

PendulumConfig PendulumConfig::read(OptionReader& options) {
  PendulumConfig c;
  c.g = options.get_double("g", c.g);
  c.x_init = options.get_double("x_init", c.x_init);
  c.y_init = options.get_double("y_init", c.y_init);
  RECUR_CHECK(c.x_init >= 0 && c.y_init >= 0, "Pendulum: x_init ({}) and y_init ({}) must be >= 0",
              c.x_init, c.y_init);
  return c;
}

Pendulum::Pendulum(const PendulumConfig& config)
    : ArrayStateEnv(Space::box({-1.0f, -1.0f, -8.0f}, {1.0f, 1.0f, 8.0f}),
                    Space::box(-kMaxTorque, kMaxTorque, {1})),
      config_(config) {}

void Pendulum::reset_impl(Rng& rng, std::optional<uint64_t> /*seed*/) {
  state_[0] = rng.uniform(-config_.x_init, config_.x_init);
  state_[1] = rng.uniform(-config_.y_init, config_.y_init);
  last_u_.reset();
}

Env::Outcome Pendulum::step_impl(std::span<const float> action) {
  auto& [th, thdot] = state_;
  // The torque stays float32 where numpy keeps it float32 (NEP 50: float32 op Python float is
  // float32), so the u terms round exactly as in Gymnasium.
  const float u = std::clamp(action[0], -kMaxTorque, kMaxTorque);
  last_u_ = u;
  const float u_cost = 0.001f * (u * u);
  const float u_accel = static_cast<float>(3.0 / (kMass * kLength * kLength)) * u;

  const double an = angle_normalize(th);
  const double costs = an * an + 0.1 * (thdot * thdot) + static_cast<double>(u_cost);

  double newthdot =
      thdot + (3 * config_.g / (2 * kLength) * std::sin(th) + static_cast<double>(u_accel)) * kDt;
  newthdot = std::clamp(newthdot, -kMaxSpeed, kMaxSpeed);
  const double newth = th + newthdot * kDt;
  th = newth;
  thdot = newthdot;
  return {-costs, false};
}

void Pendulum::observe(std::span<float> obs) const {
  obs[0] = static_cast<float>(std::cos(state_[0]));
  obs[1] = static_cast<float>(std::sin(state_[0]));
  obs[2] = static_cast<float>(state_[1]);
}

RenderInfo Pendulum::render_info() const {
  return {500, 500, 30};
}

void Pendulum::draw(render::Canvas& canvas) const {
  using render::Vec2;
  // Gymnasium's PendulumEnv.render(), in its y-up pixel numbers.
  constexpr double kScale = 500 / (2.2 * 2);  // px per m
  constexpr double kOffset = 250;
  constexpr double kRodWidth = 0.2 * kScale;
  constexpr render::Color kRod{204, 77, 77};
  const double angle = state_[0] + std::numbers::pi / 2;

  Vec2 rod[] = {
      {0, -kRodWidth / 2}, {0, kRodWidth / 2}, {kScale, kRodWidth / 2}, {kScale, -kRodWidth / 2}};
  for (Vec2& p : rod) {
    const Vec2 r = render::rotated(p, angle);
    p = render::truncated({r.x + kOffset, r.y + kOffset});
  }
  canvas.fill_polygon(rod, kRod);
  const double joint_radius = std::trunc(kRodWidth / 2);
  canvas.fill_circle({kOffset, kOffset}, joint_radius, kRod);
  const Vec2 end = render::rotated({kScale, 0}, angle);
  canvas.fill_circle(render::truncated({end.x + kOffset, end.y + kOffset}), joint_radius, kRod);

  // The torque: Gymnasium blits assets/clockwise.png (a black 3/4-circle arrow) scaled to a
  // square of side scale * |u| / 2, mirrored for u > 0. Drawn here as an arc with a head, in a
  // frame whose unit is that side and whose x axis is mirrored for u > 0.
  const double side = last_u_ ? kScale * std::abs(*last_u_) / 2 : 0;
  if (side >= 1) {
    canvas.push();
    canvas.translate({kOffset, kOffset});
    canvas.scale(*last_u_ > 0 ? -side : side, side);
    // As the asset: a thin circle of radius ~0.47 side, clockwise from the top round to the left,
    // where a barbed head points up (on along the circle).
    constexpr double kRadius = 0.47;
    canvas.stroke_arc({0, 0}, kRadius, 0.49 * std::numbers::pi, -0.99 * std::numbers::pi,
                      render::kBlack, std::max(1.0, 0.022 * side));
    const Vec2 head[] = {
        {-kRadius, 0.15}, {-kRadius + 0.075, -0.02}, {-kRadius, 0.02}, {-kRadius - 0.075, -0.02}};
    canvas.fill_polygon(head, render::kBlack);
    canvas.pop();
  }
  canvas.fill_circle({kOffset, kOffset}, std::trunc(0.05 * kScale), render::kBlack);  // the axle
}

}  // namespace recur::envs
