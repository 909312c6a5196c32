// MountainCar-v0, ported from Gymnasium 1.x (gymnasium/envs/classic_control/mountain_car.py).
// An under-powered car in a valley must rock back and forth to reach the flag on the right hill.
//   action  Discrete(3): 0 accelerate left, 1 none, 2 accelerate right
//   obs     Box(2): [position, velocity], bounds [-1.2, 0.6] x [-0.07, 0.07]
//   reward  -1 every step
//   ends    terminated when position >= 0.5 and velocity >= goal_velocity; the left wall is
//           inelastic (velocity set to 0 there)
#pragma once

#include "core/options.h"
#include "envs/classic/array_state_env.h"

namespace recur::envs {

struct MountainCarConfig {
  double goal_velocity = 0;  // Gymnasium's goal_velocity constructor argument
  double reset_low = -0.6;   // position starts ~ U(reset_low, reset_high), velocity 0
  double reset_high = -0.4;

  static MountainCarConfig read(OptionReader& options);
};

class MountainCar final : public ArrayStateEnv<2> {
 public:
  explicit MountainCar(const MountainCarConfig& config = {});

  // Gymnasium's rgb_array scene: 600x400 at 30 fps; the hill, the car and the goal flag.
  RenderInfo render_info() const override;
  void draw(render::Canvas& canvas) const override;

 private:
  void reset_impl(Rng& rng, std::optional<uint64_t> seed) override;
  Outcome step_impl(std::span<const float> action) override;
  void observe(std::span<float> obs) const override;

  MountainCarConfig config_;
  // state_ (from ArrayStateEnv): position, velocity
};

// The scene of both MountainCar envs (Gymnasium's MountainCarEnv.render(), which
// Continuous_MountainCarEnv repeats): the hill, the car at `position`, the flag at `goal_position`.
void draw_mountain_car(render::Canvas& canvas, double position, double goal_position);

}  // namespace recur::envs
