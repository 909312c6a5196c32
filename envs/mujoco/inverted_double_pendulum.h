// InvertedDoublePendulum-v4 and -v5, as Gymnasium 1.4.0 defines them (gymnasium/envs/mujoco/
// inverted_double_pendulum_v{4,5}.py): a cart pushed along a rail to balance two stacked poles.
//   action  Box(-1, 1, (1,)): force on the cart
//   obs     qpos[0] (cart), sin(qpos[1:]), cos(qpos[1:]) (the two hinge angles),
//           clip(qvel, -10, 10) (3), clip(qfrc_constraint, -10, 10): all 3 values in v4, the
//           first one in v5. 11 values (v4), 9 (v5).
//   reward  alive - (0.01 x^2 + (y - 2)^2) - (1e-3 v1^2 + 5e-3 v2^2), (x, _, y) the tip site's
//           position, v1 v2 the hinge velocities; alive = healthy_reward (10), paid on every
//           step in v4 and only while not terminated in v5
//   ends    terminated when y <= 1
//   reset   qpos0 + U(+-0.1), 0.1 * N(0, 1) velocities
#pragma once

#include "envs/mujoco/mujoco_env.h"

namespace recur::envs {

struct InvertedDoublePendulumConfig {
  MujocoConfig mujoco{.xml_file = {}, .frame_skip = 5, .reset_noise_scale = 0.1};
  double healthy_reward = 10.0;
  bool v5 = true;

  static InvertedDoublePendulumConfig read(OptionReader& options, const std::string& env, bool v5);
};

class InvertedDoublePendulum final : public MujocoEnv {
 public:
  explicit InvertedDoublePendulum(const InvertedDoublePendulumConfig& config);

 private:
  void reset_impl(Rng& rng, std::optional<uint64_t> seed) override;
  Outcome step_impl(std::span<const float> action) override;
  void observe(std::span<float> obs) const override;

  InvertedDoublePendulumConfig config_;
};

}  // namespace recur::envs
