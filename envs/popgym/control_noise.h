// Observation noise of POPGym's noisy control tasks (popgym 1.0.7: add_noise_to_obs in
// noisy_position_only_cartpole.py and noisy_position_only_pendulum.py): every observation, the
// reset one included, gets N(0, noise_sigma) noise per entry, drawn in float64, cast to float32,
// added in float32 and clipped to the observation space's bounds.
//
// POPGym draws from the env's np_random inside step(); recur draws from the env's Rng one step
// ahead and keeps that draw in the env's state, so that get_state/set_state replays a step exactly
// (the same state gives the same next observation) and a test can inject POPGym's own draw.
#pragma once

#include <array>
#include <span>

#include "core/rng.h"

namespace recur::envs {

class ControlNoise {
 public:
  static constexpr int kSize = 2;       // both noisy tasks observe 2 values
  static constexpr int kStateSize = 4;  // the current draw, then the next one

  explicit ControlNoise(double sigma = 0) : sigma_(sigma) {}
  double sigma() const { return sigma_; }

  // Draws the noise of the reset observation and of the first step's.
  void reset(Rng& rng);
  // The next observation's noise becomes current; draws the one after it.
  void advance(Rng& rng);
  // obs = clip(obs + current noise, low, high), all in float32 as POPGym computes it.
  void apply(std::span<float> obs, std::span<const float> low, std::span<const float> high) const;

  // State: current noise (kSize values), then next noise (kSize values); both float32 values.
  void get_state(std::span<double> out) const;
  // Throws std::invalid_argument (naming `owner`) on a non-finite value or one outside float.
  void set_state(std::span<const double> in, const char* owner);

 private:
  std::array<float, kSize> draw(Rng& rng) const;

  double sigma_;
  std::array<float, kSize> now_{};
  std::array<float, kSize> next_{};
};

}  // namespace recur::envs
