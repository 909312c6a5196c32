#include "envs/mujoco/humanoid.h"

#include <algorithm>
#include <cmath>

#include <mujoco/mujoco.h>

#include "core/error.h"
#include "envs/mujoco/numpy_sum.h"

namespace recur::envs {
namespace {

constexpr MujocoLayout kLayout{"Humanoid", "humanoid.xml", 24, 23, 17, 14, true};

ObsBlocks blocks(bool v5) {
  const int bodies = v5 ? kLayout.nbody - 1 : kLayout.nbody;
  const int actuator_forces = v5 ? kLayout.nv - 6 : kLayout.nv;
  return {kLayout.nq - 2, kLayout.nv, bodies * (10 + 6 + 6) + actuator_forces};
}

}  // namespace

HumanoidConfig HumanoidConfig::read(OptionReader& options, const std::string& env, bool v5) {
  HumanoidConfig c;
  c.v5 = v5;
  c.mujoco = MujocoConfig::read(options, env, c.mujoco);
  c.forward_reward_weight =
      read_weight(options, env, "forward_reward_weight", c.forward_reward_weight);
  c.ctrl_cost_weight = read_weight(options, env, "ctrl_cost_weight", c.ctrl_cost_weight);
  if (v5)
    c.contact_cost_weight = read_weight(options, env, "contact_cost_weight", c.contact_cost_weight);
  c.healthy_reward = read_weight(options, env, "healthy_reward", c.healthy_reward);
  c.terminate_when_unhealthy =
      options.get_bool("terminate_when_unhealthy", c.terminate_when_unhealthy);
  return c;
}

Humanoid::Humanoid(const HumanoidConfig& config)
    : MujocoEnv(kLayout, config.mujoco, blocks(config.v5)),
      config_(config),
      squares_(static_cast<size_t>(kLayout.nbody * 6)) {
  total_mass_ =
      numpy_sum(std::span<const double>(model()->body_mass, static_cast<size_t>(model()->nbody)));
}

bool Humanoid::is_healthy() const {
  const double z = data()->qpos[2];
  return 1.0 < z && z < 2.0;
}

double Humanoid::mass_center_x() const {
  // np.einsum("b,bj->j", body_mass, xipos)[0] / np.sum(body_mass): einsum's order of additions is
  // its own (the parity test allows for it); this adds the bodies in order.
  double sum = 0;
  for (int b = 0; b < model()->nbody; ++b) sum += model()->body_mass[b] * data()->xipos[3 * b];
  return sum / total_mass_;
}

void Humanoid::reset_impl(Rng& rng, std::optional<uint64_t> /*seed*/) {
  begin_reset();
  add_uniform_noise(rng, data()->qpos, model()->nq, reset_noise_scale());
  add_uniform_noise(rng, data()->qvel, model()->nv, reset_noise_scale());
  finish_reset();
}

Env::Outcome Humanoid::step_impl(std::span<const float> action) {
  const double x_before = mass_center_x();
  simulate(action);
  const double x_velocity = (mass_center_x() - x_before) / dt();
  const mjData* d = data();
  const bool healthy = is_healthy();
  const bool paid = healthy || (!config_.v5 && config_.terminate_when_unhealthy);
  const double rewards =
      config_.forward_reward_weight * x_velocity + (paid ? config_.healthy_reward : 0.0);
  // The ctrl cost squares MuJoCo's ctrl (float64), not the float32 action.
  const int nu = model()->nu;
  for (int i = 0; i < nu; ++i) squares_[static_cast<size_t>(i)] = d->ctrl[i] * d->ctrl[i];
  const double ctrl_cost =
      config_.ctrl_cost_weight *
      numpy_sum(std::span<const double>(squares_.data(), static_cast<size_t>(nu)));
  Outcome out;
  if (config_.v5) {
    for (size_t i = 0; i < squares_.size(); ++i) squares_[i] = d->cfrc_ext[i] * d->cfrc_ext[i];
    const double contact_cost =
        std::min(config_.contact_cost_weight * numpy_sum(std::span<const double>(squares_)), 10.0);
    out.reward = rewards - (ctrl_cost + contact_cost);
  } else {
    out.reward = rewards - ctrl_cost;
  }
  out.terminated = !healthy && config_.terminate_when_unhealthy;
  return out;
}

void Humanoid::observe(std::span<float> obs) const {
  const mjData* d = data();
  const int first = config_.v5 ? 1 : 0;  // v5 leaves out the world body
  const int bodies = model()->nbody - first;
  ObsWriter out(obs, ObsPart::kFull);
  out.positions(d->qpos + 2, model()->nq - 2);
  out.velocities(d->qvel, model()->nv);
  out.other(d->cinert + 10 * first, 10 * bodies);
  out.other(d->cvel + 6 * first, 6 * bodies);
  const int free = config_.v5 ? 6 : 0;
  out.other(d->qfrc_actuator + free, model()->nv - free);
  out.other(d->cfrc_ext + 6 * first, 6 * bodies);
}

}  // namespace recur::envs
