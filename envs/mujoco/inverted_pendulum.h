// InvertedPendulum-v4 and -v5, as Gymnasium 1.4.0 defines them (gymnasium/envs/mujoco/
// inverted_pendulum_v{4,5}.py): a cart pushed along a rail to keep a pole upright.
//   action  Box(-3, 3, (1,)): force on the cart
//   obs     qpos (cart position, pole angle), qvel: 4 values
//   ends    terminated when a value of the observation is not finite or |pole angle| > 0.2
//   reward  v4: 1 on every step; v5: 1 while not terminated, 0 on the terminating step
//   reset   qpos0 + U(+-0.01), U(+-0.01) velocities
#pragma once

#include "envs/mujoco/mujoco_env.h"

namespace recur::envs {

struct InvertedPendulumConfig {
  MujocoConfig mujoco{.xml_file = {}, .frame_skip = 2, .reset_noise_scale = 0.01};
  bool v5 = true;

  static InvertedPendulumConfig read(OptionReader& options, const std::string& env, bool v5);
};

class InvertedPendulum final : public MujocoEnv {
 public:
  explicit InvertedPendulum(const InvertedPendulumConfig& config);

 private:
  void reset_impl(Rng& rng, std::optional<uint64_t> seed) override;
  Outcome step_impl(std::span<const float> action) override;
  void observe(std::span<float> obs) const override;

  InvertedPendulumConfig config_;
};

}  // namespace recur::envs
