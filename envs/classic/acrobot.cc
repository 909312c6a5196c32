#include "envs/classic/acrobot.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/numeric.h"
#include "envs/classic/reset_bounds.h"
#include "envs/render/canvas.h"

namespace recur::envs {
namespace {
constexpr double kPi = std::numbers::pi;
constexpr double kDt = 0.2;           // s
constexpr double kLinkLength1 = 1.0;  // m
constexpr double kLinkMass1 = 1.0;    // kg
constexpr double kLinkMass2 = 1.0;    // kg
constexpr double kLinkCom1 = 0.5;     // m, centre of mass of link 1
constexpr double kLinkCom2 = 0.5;     // m
constexpr double kLinkMoi = 1.0;      // moment of inertia of both links
constexpr double kMaxVel1 = 4 * kPi;  // rad/s
constexpr double kMaxVel2 = 9 * kPi;  // rad/s
constexpr double kGravity = 9.8;
constexpr std::array<double, 3> kTorques = {-1.0, 0.0, 1.0};

using State = std::array<double, 4>;

// Time derivative of [t1, t2, t1_dot, t2_dot] under torque a (Gymnasium's _dsdt, "book").
State dsdt(const State& s, double a) {
  constexpr double m1 = kLinkMass1, m2 = kLinkMass2, l1 = kLinkLength1;
  constexpr double lc1 = kLinkCom1, lc2 = kLinkCom2, I1 = kLinkMoi, I2 = kLinkMoi;
  const double theta1 = s[0], theta2 = s[1], dtheta1 = s[2], dtheta2 = s[3];
  const double d1 =
      m1 * (lc1 * lc1) + m2 * ((l1 * l1) + (lc2 * lc2) + 2 * l1 * lc2 * std::cos(theta2)) + I1 + I2;
  const double d2 = m2 * ((lc2 * lc2) + l1 * lc2 * std::cos(theta2)) + I2;
  const double phi2 = m2 * lc2 * kGravity * std::cos(theta1 + theta2 - kPi / 2.0);
  const double phi1 = -m2 * l1 * lc2 * (dtheta2 * dtheta2) * std::sin(theta2) -
                      2 * m2 * l1 * lc2 * dtheta2 * dtheta1 * std::sin(theta2) +
                      (m1 * lc1 + m2 * l1) * kGravity * std::cos(theta1 - kPi / 2) + phi2;
  const double ddtheta2 =
      (a + d2 / d1 * phi1 - m2 * l1 * lc2 * (dtheta1 * dtheta1) * std::sin(theta2) - phi2) /
      (m2 * (lc2 * lc2) + I2 - (d2 * d2) / d1);
  const double ddtheta1 = -(d2 * ddtheta2 + phi1) / d1;
  return {dtheta1, dtheta2, ddtheta1, ddtheta2};
}

State axpy(const State& y, double h, const State& k) {
  return {y[0] + h * k[0], y[1] + h * k[1], y[2] + h * k[2], y[3] + h * k[3]};
}

// Shifts x by multiples of (M - m) into [m, M], as Gymnasium's wrap().
double wrap(double x, double m, double M) {
  const double diff = M - m;
  while (x > M) x = x - diff;
  while (x < m) x = x + diff;
  return x;
}
}  // namespace

AcrobotConfig AcrobotConfig::read(OptionReader& options) {
  AcrobotConfig c;
  read_reset_bounds(options, c.reset_low, c.reset_high);
  return c;
}

Acrobot::Acrobot(const AcrobotConfig& config)
    : ArrayStateEnv(
          Space::box({-1, -1, -1, -1, static_cast<float>(-kMaxVel1), static_cast<float>(-kMaxVel2)},
                     {1, 1, 1, 1, static_cast<float>(kMaxVel1), static_cast<float>(kMaxVel2)}),
          Space::discrete(3)),
      config_(config) {}

void Acrobot::reset_impl(Rng& rng, std::optional<uint64_t> /*seed*/) {
  // Gymnasium draws float64 and stores float32.
  for (auto& v : state_) v = round_to_float(rng.uniform(config_.reset_low, config_.reset_high));
}

Env::Outcome Acrobot::step_impl(std::span<const float> action) {
  const double torque = kTorques[static_cast<size_t>(action[0])];

  // One classic RK4 step over [0, dt], with the same summation order as Gymnasium's rk4().
  const State& y0 = state_;
  const double dt2 = kDt / 2.0;
  const State k1 = dsdt(y0, torque);
  const State k2 = dsdt(axpy(y0, dt2, k1), torque);
  const State k3 = dsdt(axpy(y0, dt2, k2), torque);
  const State k4 = dsdt(axpy(y0, kDt, k3), torque);
  State ns;
  for (size_t i = 0; i < 4; ++i)
    ns[i] = y0[i] + kDt / 6.0 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);

  ns[0] = wrap(ns[0], -kPi, kPi);
  ns[1] = wrap(ns[1], -kPi, kPi);
  ns[2] = std::min(std::max(ns[2], -kMaxVel1), kMaxVel1);
  ns[3] = std::min(std::max(ns[3], -kMaxVel2), kMaxVel2);
  state_ = ns;

  const bool terminated = -std::cos(ns[0]) - std::cos(ns[1] + ns[0]) > 1.0;
  return {terminated ? 0.0 : -1.0, terminated};
}

void Acrobot::observe(std::span<float> obs) const {
  const State& s = state_;
  obs[0] = static_cast<float>(std::cos(s[0]));
  obs[1] = static_cast<float>(std::sin(s[0]));
  obs[2] = static_cast<float>(std::cos(s[1]));
  obs[3] = static_cast<float>(std::sin(s[1]));
  obs[4] = static_cast<float>(s[2]);
  obs[5] = static_cast<float>(s[3]);
}

RenderInfo Acrobot::render_info() const {
  return {500, 500, 15};
}

void Acrobot::draw(render::Canvas& canvas) const {
  using render::Vec2;
  // Gymnasium's AcrobotEnv.render(), in its y-up pixel numbers.
  constexpr double kLinkLength2 = 1.0;  // m (Gymnasium's LINK_LENGTH_2; the dynamics never use it)
  constexpr double kBound = kLinkLength1 + kLinkLength2 + 0.2;
  constexpr double kScale = 500 / (kBound * 2);  // px per m
  constexpr double kOffset = 250;
  const double t1 = state_[0], t12 = state_[0] + state_[1];

  // The goal height (the tip one link above the pivot); pygame.draw.line truncates to int.
  const double goal_y = std::trunc(kLinkLength1 * kScale + kOffset);
  canvas.line(render::truncated({-kBound * kScale + kOffset, goal_y}),
              render::truncated({kBound * kScale + kOffset, goal_y}), render::kBlack, 1);

  // Joints (x, y) = (L sin, -L cos) summed down the chain; each link points at angle - pi/2.
  const Vec2 joints[] = {
      {0, 0}, {kLinkLength1 * std::sin(t1) * kScale, -kLinkLength1 * std::cos(t1) * kScale}};
  const double angles[] = {t1 - kPi / 2, t12 - kPi / 2};
  const double lengths[] = {kLinkLength1 * kScale, kLinkLength2 * kScale};
  for (int i = 0; i < 2; ++i) {
    const Vec2 at{joints[i].x + kOffset, joints[i].y + kOffset};
    Vec2 link[] = {{0, -0.1 * kScale},
                   {0, 0.1 * kScale},
                   {lengths[i], 0.1 * kScale},
                   {lengths[i], -0.1 * kScale}};
    for (Vec2& p : link) {
      const Vec2 r = render::rotated(p, angles[i]);
      p = render::truncated({r.x + at.x, r.y + at.y});
    }
    canvas.fill_polygon(link, {0, 204, 204});
    canvas.fill_circle(render::truncated(at), std::trunc(0.1 * kScale), {204, 204, 0});
  }
}

}  // namespace recur::envs
