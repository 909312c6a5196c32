#include "envs/mujoco/swimmer.h"

#include <cmath>

#include <mujoco/mujoco.h>

#include "core/error.h"
#include "envs/mujoco/numpy_sum.h"

namespace recur::envs {
namespace {

constexpr MujocoLayout kLayout{"Swimmer", "swimmer.xml", 5, 5, 2, 4};

}  // namespace

SwimmerConfig SwimmerConfig::read(OptionReader& options, const std::string& env) {
  SwimmerConfig c;
  c.mujoco = MujocoConfig::read(options, env, c.mujoco);
  c.forward_reward_weight =
      read_weight(options, env, "forward_reward_weight", c.forward_reward_weight);
  c.ctrl_cost_weight = read_weight(options, env, "ctrl_cost_weight", c.ctrl_cost_weight);
  return c;
}

Swimmer::Swimmer(const SwimmerConfig& config)
    : MujocoEnv(kLayout, config.mujoco, {kLayout.nq - 2, kLayout.nv, 0}), config_(config) {}

void Swimmer::reset_impl(Rng& rng, std::optional<uint64_t> /*seed*/) {
  begin_reset();
  add_uniform_noise(rng, data()->qpos, model()->nq, reset_noise_scale());
  add_uniform_noise(rng, data()->qvel, model()->nv, reset_noise_scale());
  finish_reset();
}

Env::Outcome Swimmer::step_impl(std::span<const float> action) {
  const double x_before = data()->qpos[0];
  simulate(action);
  const double x_velocity = (data()->qpos[0] - x_before) / dt();
  Outcome out;
  out.reward = config_.forward_reward_weight * x_velocity -
               numpy_ctrl_cost(config_.ctrl_cost_weight, action);
  return out;
}

void Swimmer::observe(std::span<float> obs) const {
  ObsWriter out(obs, ObsPart::kFull);
  out.positions(data()->qpos + 2, model()->nq - 2);
  out.velocities(data()->qvel, model()->nv);
}

}  // namespace recur::envs
