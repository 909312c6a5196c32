// Ant-v4 and Ant-v5, as Gymnasium 1.4.0 defines them (gymnasium/envs/mujoco/ant_v{4,5}.py): a
// four-legged robot rewarded for walking along x.
//   action  Box(-1, 1, (8,)): hip and ankle torques
//   obs     qpos[2:] (13 positions: torso z, orientation quaternion, 8 joint angles), qvel (14
//           velocities); v5 adds clip(cfrc_ext[1:], -1, 1) (78: external contact forces on the
//           13 bodies). 27 values (v4), 105 (v5).
//   reward  dx/dt of the torso (xpos of body 1, as computed by MuJoCo: it lags qpos by one
//           physics step) + healthy_reward - ctrl_cost_weight * sum(action^2)
//           - (v5) contact_cost_weight * sum(clip(cfrc_ext, -1, 1)^2) over all bodies
//   ends    terminated when unhealthy: any state value non-finite, or torso z outside [0.2, 1]
//           (closed); v4 pays the healthy reward also on the terminating step, v5 does not
//   reset   qpos0 + U(+-0.1) (the quaternion too, unnormalized), 0.1 * N(0, 1) velocities
// The -P/-V ids show qpos[2:] or qvel only; contact forces are neither, so v5's -P/-V drop them.
#pragma once

#include "envs/mujoco/mujoco_env.h"

namespace recur::envs {

struct AntConfig {
  MujocoConfig mujoco{.xml_file = {}, .frame_skip = 5, .reset_noise_scale = 0.1};
  double forward_reward_weight = 1.0;
  double ctrl_cost_weight = 0.5;
  double contact_cost_weight = 5e-4;  // v5 only (v4's use_contact_forces=False)
  double healthy_reward = 1.0;
  bool terminate_when_unhealthy = true;
  bool v5 = true;

  static AntConfig read(OptionReader& options, const std::string& env, AntConfig defaults);
};

class Ant final : public MujocoEnv {
 public:
  explicit Ant(const AntConfig& config);

  bool is_healthy() const;

 private:
  void reset_impl(Rng& rng, std::optional<uint64_t> seed) override;
  Outcome step_impl(std::span<const float> action) override;
  void observe(std::span<float> obs) const override;

  AntConfig config_;
  std::vector<double> contact_squares_;  // (nbody * 6,) scratch of the contact cost
};

}  // namespace recur::envs
