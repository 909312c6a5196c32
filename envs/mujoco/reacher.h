// Reacher-v4 and Reacher-v5, as Gymnasium 1.4.0 defines them (gymnasium/envs/mujoco/
// reacher_v{4,5}.py): a two-joint arm moves its fingertip to a target in the plane.
//   action  Box(-1, 1, (2,)): joint torques
//   obs     cos and sin of the two joint angles (4), qpos[2:] (the target's x, y), qvel[:2] (the
//           arm's joint velocities), fingertip - target (body positions): x, y, z in v4 (11
//           values), x, y in v5 (10)
//   reward  -reward_dist_weight * |fingertip - target| - reward_control_weight * sum(action^2);
//           v4 measures the distance before the step (the body positions of the previous
//           physics step), v5 after it
//   ends    never (the 50-step limit truncates)
//   reset   arm qpos0 + U(+-0.1), target uniform in the disc of radius 0.2 (rejection sampling in
//           the square U(+-0.2)^2), arm velocities U(+-0.005), target velocities 0
// reset_noise_scale is not an option: Gymnasium's Reacher hard-codes its reset distribution.
#pragma once

#include "envs/mujoco/mujoco_env.h"

namespace recur::envs {

struct ReacherConfig {
  MujocoConfig mujoco{.xml_file = {}, .frame_skip = 2, .reset_noise_scale = 0};
  double reward_dist_weight = 1.0;
  double reward_control_weight = 1.0;
  bool v5 = true;

  static ReacherConfig read(OptionReader& options, const std::string& env, bool v5);
};

class Reacher final : public MujocoEnv {
 public:
  explicit Reacher(const ReacherConfig& config);

 private:
  void reset_impl(Rng& rng, std::optional<uint64_t> seed) override;
  Outcome step_impl(std::span<const float> action) override;
  void observe(std::span<float> obs) const override;
  double distance() const;  // |fingertip - target|, as np.linalg.norm

  ReacherConfig config_;
  int fingertip_ = -1, target_ = -1;  // body ids
};

}  // namespace recur::envs
