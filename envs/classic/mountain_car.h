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

 private:
  void reset_impl(Rng& rng) override;
  Outcome step_impl(std::span<const float> action) override;
  void observe(std::span<float> obs) const override;

  MountainCarConfig config_;
  // state_ (from ArrayStateEnv): position, velocity
};

}  // namespace recur::envs
