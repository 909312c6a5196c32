#include "envs/classic/cartpole.h"

#include <cmath>
#include <limits>
#include <numbers>

#include "envs/classic/reset_bounds.h"
#include "envs/render/canvas.h"

namespace recur::envs {
namespace {
constexpr double kGravity = 9.8;   // m/s^2
constexpr double kMassCart = 1.0;  // kg
constexpr double kMassPole = 0.1;  // kg
constexpr double kTotalMass = kMassPole + kMassCart;
constexpr double kHalfLength = 0.5;  // m, half the pole's length
constexpr double kPoleMassLength = kMassPole * kHalfLength;
constexpr double kForceMag = 10.0;                                   // N
constexpr double kTau = 0.02;                                        // s between updates
constexpr double kThetaThreshold = 12 * 2 * std::numbers::pi / 360;  // rad
constexpr double kXThreshold = 2.4;                                  // m
constexpr float kInf = std::numeric_limits<float>::infinity();

Space make_observation_space() {
  const auto x = static_cast<float>(kXThreshold * 2);
  const auto th = static_cast<float>(kThetaThreshold * 2);
  return Space::box({-x, -kInf, -th, -kInf}, {x, kInf, th, kInf});
}
}  // namespace

CartPoleConfig CartPoleConfig::read(OptionReader& options) {
  CartPoleConfig c;
  c.sutton_barto_reward = options.get_bool("sutton_barto_reward", c.sutton_barto_reward);
  read_reset_bounds(options, c.reset_low, c.reset_high);
  return c;
}

CartPole::CartPole(const CartPoleConfig& config)
    : ArrayStateEnv(make_observation_space(), Space::discrete(2)), config_(config) {}

void CartPole::reset_impl(Rng& rng, std::optional<uint64_t> /*seed*/) {
  for (auto& v : state_) v = rng.uniform(config_.reset_low, config_.reset_high);
}

Env::Outcome CartPole::step_impl(std::span<const float> action) {
  auto& [x, x_dot, theta, theta_dot] = state_;
  const double force = action[0] == 1.0f ? kForceMag : -kForceMag;
  const double costheta = std::cos(theta);
  const double sintheta = std::sin(theta);

  // Same expression order as Gymnasium, so the doubles agree bit for bit.
  const double temp = (force + kPoleMassLength * (theta_dot * theta_dot) * sintheta) / kTotalMass;
  const double thetaacc =
      (kGravity * sintheta - costheta * temp) /
      (kHalfLength * (4.0 / 3.0 - kMassPole * (costheta * costheta) / kTotalMass));
  const double xacc = temp - kPoleMassLength * thetaacc * costheta / kTotalMass;

  x = x + kTau * x_dot;
  x_dot = x_dot + kTau * xacc;
  theta = theta + kTau * theta_dot;
  theta_dot = theta_dot + kTau * thetaacc;

  Outcome out;
  out.terminated =
      x < -kXThreshold || x > kXThreshold || theta < -kThetaThreshold || theta > kThetaThreshold;
  if (config_.sutton_barto_reward) {
    out.reward = out.terminated ? -1.0 : 0.0;
  } else {
    out.reward = 1.0;
  }
  return out;
}

void CartPole::observe(std::span<float> obs) const {
  for (size_t i = 0; i < 4; ++i) obs[i] = static_cast<float>(state_[i]);
}

RenderInfo CartPole::render_info() const {
  return {600, 400, 50};
}

void CartPole::draw(render::Canvas& canvas) const {
  using render::Vec2;
  // Gymnasium's CartPoleEnv.render(), in its y-up pixel numbers.
  constexpr double kScale = 600 / (kXThreshold * 2);  // px per m
  constexpr double kPoleLength = kScale * (2 * kHalfLength);
  constexpr double kCartY = 100, kAxleOffset = 30 / 4.0;
  const double cart_x = state_[0] * kScale + 600 / 2.0;

  const Vec2 cart[] = {
      render::truncated({cart_x - 25, kCartY - 15}), render::truncated({cart_x - 25, kCartY + 15}),
      render::truncated({cart_x + 25, kCartY + 15}), render::truncated({cart_x + 25, kCartY - 15})};
  Vec2 pole[] = {{-5, -5}, {-5, kPoleLength - 5}, {5, kPoleLength - 5}, {5, -5}};
  for (Vec2& p : pole) {
    const Vec2 r = render::rotated(p, -state_[2]);
    p = render::truncated({r.x + cart_x, r.y + kCartY + kAxleOffset});
  }
  canvas.fill_polygon(cart, render::kBlack);
  canvas.fill_polygon(pole, {202, 152, 101});
  canvas.fill_circle(render::truncated({cart_x, kCartY + kAxleOffset}), 5, {129, 132, 203});
  canvas.line({-1, kCartY}, {601, kCartY}, render::kBlack, 1);  // the track
}

}  // namespace recur::envs
