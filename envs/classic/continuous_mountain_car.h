// MountainCarContinuous-v0, ported from Gymnasium 1.x
// (gymnasium/envs/classic_control/continuous_mountain_car.py). The same valley as MountainCar,
// with a continuous engine and a goal at 0.45.
//   action  Box(-1, 1, (1,)): force, clipped to +-1 for the physics
//   obs     Box(2): [position, velocity], bounds [-1.2, 0.6] x [-0.07, 0.07]
//   reward  -0.1 a^2 every step (a as given, unclipped, as in Gymnasium), +100 on reaching the goal
//   ends    terminated when position >= 0.45 and velocity >= goal_velocity
// Gymnasium stores the state as float32 after every step (the reset state is float64); recur does
// the same. Inside a step recur computes in float64, where numpy mixes float32 and float64
// operations; the stored result can differ from Gymnasium's by one float32 ulp (< 1e-7).
#pragma once

#include "core/options.h"
#include "envs/classic/array_state_env.h"

namespace recur::envs {

struct ContinuousMountainCarConfig {
  double goal_velocity = 0;  // Gymnasium's goal_velocity constructor argument
  double reset_low = -0.6;   // position starts ~ U(reset_low, reset_high), velocity 0
  double reset_high = -0.4;

  static ContinuousMountainCarConfig read(OptionReader& options);
};

class ContinuousMountainCar final : public ArrayStateEnv<2> {
 public:
  explicit ContinuousMountainCar(const ContinuousMountainCarConfig& config = {});

  // Gymnasium's rgb_array scene: MountainCar's (600x400 at 30 fps) with the flag at 0.45.
  RenderInfo render_info() const override;
  void draw(render::Canvas& canvas) const override;

 private:
  void reset_impl(Rng& rng, std::optional<uint64_t> seed) override;
  Outcome step_impl(std::span<const float> action) override;
  void observe(std::span<float> obs) const override;

  ContinuousMountainCarConfig config_;
  // state_ (from ArrayStateEnv): position, velocity
};

}  // namespace recur::envs
