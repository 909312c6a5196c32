// Swimmer-v4 and Swimmer-v5, as Gymnasium 1.4.0 defines them (gymnasium/envs/mujoco/
// swimmer_v{4,5}.py): a three-link snake in a viscous fluid, rewarded for swimming along x.
//   action  Box(-1, 1, (2,)): torques on the two rotors
//   obs     qpos[2:] (3: front tip angle, two rotor angles), qvel (5): 8 values
//   reward  forward_reward_weight * dx/dt - ctrl_cost_weight * sum(action^2), x = qpos[0]
//   ends    never (the 1000-step limit truncates)
//   reset   qpos0 + U(+-0.1), U(+-0.1) velocities
// v4 and v5 have the same dynamics, observation and reward (v5 adds keyword arguments).
#pragma once

#include "envs/mujoco/mujoco_env.h"

namespace recur::envs {

struct SwimmerConfig {
  MujocoConfig mujoco{.xml_file = {}, .frame_skip = 4, .reset_noise_scale = 0.1};
  double forward_reward_weight = 1.0;
  double ctrl_cost_weight = 1e-4;

  static SwimmerConfig read(OptionReader& options, const std::string& env);
};

class Swimmer final : public MujocoEnv {
 public:
  explicit Swimmer(const SwimmerConfig& config);

 private:
  void reset_impl(Rng& rng, std::optional<uint64_t> seed) override;
  Outcome step_impl(std::span<const float> action) override;
  void observe(std::span<float> obs) const override;

  SwimmerConfig config_;
};

}  // namespace recur::envs
