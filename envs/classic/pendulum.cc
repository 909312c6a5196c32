#include "envs/classic/pendulum.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

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

void Pendulum::reset_impl(Rng& rng) {
  state_[0] = rng.uniform(-config_.x_init, config_.x_init);
  state_[1] = rng.uniform(-config_.y_init, config_.y_init);
}

Env::Outcome Pendulum::step_impl(std::span<const float> action) {
  auto& [th, thdot] = state_;
  // The torque stays float32 where numpy keeps it float32 (NEP 50: float32 op Python float is
  // float32), so the u terms round exactly as in Gymnasium.
  const float u = std::clamp(action[0], -kMaxTorque, kMaxTorque);
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

}  // namespace recur::envs
