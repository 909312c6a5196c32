#include "envs/classic/continuous_mountain_car.h"

#include <algorithm>
#include <cmath>

#include "core/numeric.h"
#include "envs/classic/mountain_car.h"
#include "envs/classic/reset_bounds.h"

namespace recur::envs {
namespace {
constexpr double kMinAction = -1.0;
constexpr double kMaxAction = 1.0;
constexpr double kMinPosition = -1.2;
constexpr double kMaxPosition = 0.6;
constexpr double kMaxSpeed = 0.07;
constexpr double kGoalPosition = 0.45;  // 0.45 here, 0.5 in the discrete MountainCar
constexpr double kPower = 0.0015;
}  // namespace

ContinuousMountainCarConfig ContinuousMountainCarConfig::read(OptionReader& options) {
  ContinuousMountainCarConfig c;
  c.goal_velocity = options.get_double("goal_velocity", c.goal_velocity);
  read_reset_bounds(options, c.reset_low, c.reset_high);
  return c;
}

ContinuousMountainCar::ContinuousMountainCar(const ContinuousMountainCarConfig& config)
    : ArrayStateEnv(
          Space::box({static_cast<float>(kMinPosition), static_cast<float>(-kMaxSpeed)},
                     {static_cast<float>(kMaxPosition), static_cast<float>(kMaxSpeed)}),
          Space::box(static_cast<float>(kMinAction), static_cast<float>(kMaxAction), {1})),
      config_(config) {}

void ContinuousMountainCar::reset_impl(Rng& rng, std::optional<uint64_t> /*seed*/) {
  state_ = {rng.uniform(config_.reset_low, config_.reset_high), 0.0};
}

Env::Outcome ContinuousMountainCar::step_impl(std::span<const float> action) {
  double position = state_[0];
  double velocity = state_[1];
  const double force = std::min(std::max(static_cast<double>(action[0]), kMinAction), kMaxAction);

  velocity += force * kPower - 0.0025 * std::cos(3 * position);
  velocity = std::clamp(velocity, -kMaxSpeed, kMaxSpeed);
  position += velocity;
  position = std::clamp(position, kMinPosition, kMaxPosition);
  if (position == kMinPosition && velocity < 0) velocity = 0;

  Outcome out;
  out.terminated = position >= kGoalPosition && velocity >= config_.goal_velocity;
  out.reward = out.terminated ? 100.0 : 0.0;
  out.reward -= std::pow(static_cast<double>(action[0]), 2) * 0.1;

  state_ = {round_to_float(position), round_to_float(velocity)};  // Gymnasium stores float32
  return out;
}

void ContinuousMountainCar::observe(std::span<float> obs) const {
  obs[0] = static_cast<float>(state_[0]);
  obs[1] = static_cast<float>(state_[1]);
}

RenderInfo ContinuousMountainCar::render_info() const {
  return {600, 400, 30};
}

void ContinuousMountainCar::draw(render::Canvas& canvas) const {
  draw_mountain_car(canvas, state_[0], kGoalPosition);
}

}  // namespace recur::envs
