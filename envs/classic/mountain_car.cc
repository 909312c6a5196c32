#include "envs/classic/mountain_car.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "envs/classic/reset_bounds.h"
#include "envs/render/canvas.h"

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

void MountainCar::reset_impl(Rng& rng, std::optional<uint64_t> /*seed*/) {
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

RenderInfo MountainCar::render_info() const {
  return {600, 400, 30};
}

void MountainCar::draw(render::Canvas& canvas) const {
  draw_mountain_car(canvas, state_[0], kGoalPosition);
}

void draw_mountain_car(render::Canvas& canvas, double position, double goal_position) {
  using render::Vec2;
  // Gymnasium's MountainCarEnv.render(), in its y-up pixel numbers.
  constexpr double kScale = 600 / (kMaxPosition - kMinPosition);  // px per unit of position
  constexpr double kCarWidth = 40, kCarHeight = 20, kClearance = 10;
  auto height = [](double x) { return std::sin(3 * x) * 0.45 + 0.55; };

  std::array<Vec2, 100> track;  // np.linspace(min_position, max_position, 100)
  for (size_t i = 0; i < track.size(); ++i) {
    const double x = kMinPosition + (kMaxPosition - kMinPosition) * static_cast<double>(i) / 99;
    track[i] = {(x - kMinPosition) * kScale, height(x) * kScale};
  }
  canvas.polyline(track, render::kBlack, 1);

  const double angle = std::cos(3 * position);
  const Vec2 at{(position - kMinPosition) * kScale, kClearance + height(position) * kScale};
  Vec2 car[] = {{-kCarWidth / 2, 0},
                {-kCarWidth / 2, kCarHeight},
                {kCarWidth / 2, kCarHeight},
                {kCarWidth / 2, 0}};
  for (Vec2& p : car) {
    const Vec2 r = render::rotated(p, angle);
    p = render::truncated({r.x + at.x, r.y + at.y});
  }
  canvas.fill_polygon(car, render::kBlack);
  for (const double wheel_x : {kCarWidth / 4, -kCarWidth / 4}) {
    const Vec2 r = render::rotated({wheel_x, 0}, angle);
    canvas.fill_circle(render::truncated({r.x + at.x, r.y + at.y}), std::trunc(kCarHeight / 2.5),
                       {128, 128, 128});
  }

  const double flag_x = std::trunc((goal_position - kMinPosition) * kScale);
  const double flag_y1 = std::trunc(height(goal_position) * kScale);
  const double flag_y2 = flag_y1 + 50;
  // gfxdraw.vline covers the pixels flag_y1..flag_y2 inclusive: half a pixel past each end.
  canvas.line({flag_x, flag_y1 - 0.5}, {flag_x, flag_y2 + 0.5}, render::kBlack, 1);
  const Vec2 flag[] = {{flag_x, flag_y2}, {flag_x, flag_y2 - 10}, {flag_x + 25, flag_y2 - 5}};
  canvas.fill_polygon(flag, {204, 204, 0});
}

}  // namespace recur::envs
