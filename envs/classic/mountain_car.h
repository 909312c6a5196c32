// MountainCar-v0, ported from Gymnasium 1.x (gymnasium/envs/classic_control/mountain_car.py).
// An under-powered car in a valley must rock back and forth to reach the flag on the right hill.
//   action  Discrete(3): 0 accelerate left, 1 none, 2 accelerate right
//   obs     Box(2): [position, velocity], bounds [-1.2, 0.6] x [-0.07, 0.07]
//   reward  -1 every step
//   ends    terminated when position >= 0.5 and velocity >= goal_velocity; the left wall is
//           inelastic (velocity set to 0 there)
#pragma once

#include <array>

#include "core/options.h"
#include "envs/env.h"

namespace recur::envs {

struct MountainCarConfig {
  double goal_velocity = 0;  // Gymnasium's goal_velocity constructor argument
  double reset_low = -0.6;   // position starts ~ U(reset_low, reset_high), velocity 0
  double reset_high = -0.4;

  static MountainCarConfig read(OptionReader& options);
};

class MountainCar final : public Env {
 public:
  explicit MountainCar(const MountainCarConfig& config = {});

  int state_size() const override { return 2; }
  void get_state(std::span<double> out) const override;

 private:
  void reset_impl(Rng& rng) override;
  Outcome step_impl(std::span<const float> action) override;
  void observe(std::span<float> obs) const override;
  void set_state_impl(std::span<const double> state) override;

  MountainCarConfig config_;
  std::array<double, 2> state_{};  // position, velocity
};

}  // namespace recur::envs
