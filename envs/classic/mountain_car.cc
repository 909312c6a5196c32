#include "envs/classic/mountain_car.h"

#include <algorithm>
#include <cmath>

#include "envs/classic/reset_bounds.h"

namespace recur::envs {
namespace {
constexpr double kMinPosition = -1.2;
constexpr double kMaxPosition = 0.6;
constexpr double kMaxSpeed = 0.07;
constexpr double kGoalPosition = 0.5;
constexpr double kForce = 0.001;
constexpr double kGravity = 0.0025;
}  // namespace

MountainCarConfig MountainCarConfig::read(OptionReader& options) {
  MountainCarConfig c;
  c.goal_velocity = options.get_double("goal_velocity", c.goal_velocity);
  read_reset_bounds(options, c.reset_low, c.reset_high);
  return c;
}

MountainCar::MountainCar(const MountainCarConfig& config)
    : ArrayStateEnv(Space::box({static_cast<float>(kMinPosition), static_cast<float>(-kMaxSpeed)},
                               {static_cast<float>(kMaxPosition), static_cast<float>(kMaxSpeed)}),
                    Space::discrete(3)),
      config_(config) {}

void MountainCar::reset_impl(Rng& rng) {
  state_ = {rng.uniform(config_.reset_low, config_.reset_high), 0.0};
}

Env::Outcome MountainCar::step_impl(std::span<const float> action) {
  auto& [position, velocity] = state_;
  const double a = action[0];
  velocity += (a - 1) * kForce + std::cos(3 * position) * (-kGravity);
  velocity = std::clamp(velocity, -kMaxSpeed, kMaxSpeed);
  position += velocity;
  position = std::clamp(position, kMinPosition, kMaxPosition);
  if (position == kMinPosition && velocity < 0) velocity = 0;
  return {-1.0, position >= kGoalPosition && velocity >= config_.goal_velocity};
}

void MountainCar::observe(std::span<float> obs) const {
  obs[0] = static_cast<float>(state_[0]);
  obs[1] = static_cast<float>(state_[1]);
}

}  // namespace recur::envs
