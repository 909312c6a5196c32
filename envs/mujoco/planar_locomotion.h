// HalfCheetah, Hopper and Walker2d, v4 and v5, as Gymnasium 1.4.0 defines them
// (gymnasium/envs/mujoco/{half_cheetah,hopper,walker2d}_v{4,5}.py): planar robots rewarded for
// running forward along x.
//   action  Box(ctrlrange): torques, HalfCheetah 6, Hopper 3, Walker2d 6
//   obs     qpos[1:] (positions: root z, root angle, joint angles), then qvel (velocities;
//           Hopper and Walker2d clip them to [-10, 10]): 17, 11, 17 values
//   reward  forward_reward_weight * dx/dt + healthy_reward - ctrl_cost_weight * sum(action^2),
//           x = qpos[0]; HalfCheetah has no healthy reward
//   ends    HalfCheetah never terminates; Hopper and Walker2d terminate when unhealthy:
//             Hopper    0.7 < z, -0.2 < angle < 0.2, |qpos[2:]|, |qvel| < 100 (all strict)
//             Walker2d  0.8 < z < 2, -1 < angle < 1
//           v4 pays the healthy reward also on the terminating step; v5 pays it only when healthy
//           (Gymnasium issue #526)
//   reset   qpos0 + U(+-s) and U(+-s) velocities (s = 5e-3); HalfCheetah U(+-0.1) positions and
//           0.1 * N(0, 1) velocities
// Walker2d-v5 reads walker2d_v5.xml (both feet friction 1.9; v4's left foot has 0.9). The -P and
// -V ids (ObsPart) show only the positions or only the velocities.
#pragma once

#include "envs/mujoco/mujoco_env.h"

namespace recur::envs {

enum class PlanarRobot { kHalfCheetah, kHopper, kWalker2d };

struct PlanarConfig {
  MujocoConfig mujoco;
  double forward_reward_weight = 1.0;
  double ctrl_cost_weight = 1e-3;
  double healthy_reward = 1.0;  // Hopper and Walker2d
  bool terminate_when_unhealthy = true;
  bool v5 = true;  // healthy reward only when healthy (v4: also on the terminating step)

  // Gymnasium's defaults for `robot` at the given version.
  static PlanarConfig defaults(PlanarRobot robot, bool v5, ObsPart part);
  static PlanarConfig read(OptionReader& options, const std::string& env, PlanarRobot robot,
                           PlanarConfig defaults);
};

class PlanarLocomotion final : public MujocoEnv {
 public:
  PlanarLocomotion(PlanarRobot robot, const PlanarConfig& config);

  bool is_healthy() const;

 private:
  void reset_impl(Rng& rng, std::optional<uint64_t> seed) override;
  Outcome step_impl(std::span<const float> action) override;
  void observe(std::span<float> obs) const override;

  PlanarRobot robot_;
  PlanarConfig config_;
  double velocity_clip_;  // of the observed velocities
};

}  // namespace recur::envs
