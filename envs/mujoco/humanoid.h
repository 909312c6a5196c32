// Humanoid-v4 and Humanoid-v5, as Gymnasium 1.4.0 defines them (gymnasium/envs/mujoco/
// humanoid_v{4,5}.py): a 3D biped rewarded for walking forward along x.
//   action  Box(-0.4, 0.4, (17,)): joint torques
//   obs     qpos[2:] (22), qvel (23), then MuJoCo's body quantities: cinert (10 per body), cvel
//           (6 per body), qfrc_actuator, cfrc_ext (6 per body). v4 takes them for every body and
//           all 23 qfrc_actuator values (376 in all); v5 leaves out the world body and the 6 free
//           joint values of qfrc_actuator (348)
//   reward  forward_reward_weight * dx/dt + healthy_reward - ctrl_cost_weight * sum(ctrl^2)
//           - (v5) min(contact_cost_weight * sum(cfrc_ext^2), 10); x is the x of the center of
//           mass (body masses times xipos); ctrl is MuJoCo's ctrl, the action in float64
//   ends    terminated when unhealthy: torso z outside (1, 2); v4 pays the healthy reward also on
//           the terminating step, v5 does not
//   reset   qpos0 + U(+-0.01), U(+-0.01) velocities
#pragma once

#include "envs/mujoco/mujoco_env.h"

namespace recur::envs {

struct HumanoidConfig {
  MujocoConfig mujoco{.xml_file = {}, .frame_skip = 5, .reset_noise_scale = 1e-2};
  double forward_reward_weight = 1.25;
  double ctrl_cost_weight = 0.1;
  double contact_cost_weight = 5e-7;  // v5 only
  double healthy_reward = 5.0;
  bool terminate_when_unhealthy = true;
  bool v5 = true;

  static HumanoidConfig read(OptionReader& options, const std::string& env, bool v5);
};

class Humanoid final : public MujocoEnv {
 public:
  explicit Humanoid(const HumanoidConfig& config);

  bool is_healthy() const;

 private:
  void reset_impl(Rng& rng, std::optional<uint64_t> seed) override;
  Outcome step_impl(std::span<const float> action) override;
  void observe(std::span<float> obs) const override;
  double mass_center_x() const;

  HumanoidConfig config_;
  double total_mass_ = 0;        // np.sum(body_mass), in NumPy's order
  std::vector<double> squares_;  // scratch of the ctrl and contact costs
};

}  // namespace recur::envs
