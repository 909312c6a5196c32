#include "envs/mujoco/ant.h"

#include <algorithm>
#include <cmath>

#include <mujoco/mujoco.h>

#include "core/error.h"
#include "envs/mujoco/numpy_sum.h"

namespace recur::envs {
namespace {

constexpr MujocoLayout kLayout{"Ant", "ant.xml", 15, 14, 8, 14, true};
constexpr int kTorso = 1;  // Gymnasium's main_body (v5) and get_body_com("torso") (v4)

ObsBlocks blocks(bool v5) {
  return {kLayout.nq - 2, kLayout.nv, v5 ? (kLayout.nbody - 1) * 6 : 0};
}

}  // namespace

AntConfig AntConfig::read(OptionReader& options, const std::string& env, AntConfig defaults) {
  AntConfig c = defaults;
  c.mujoco = MujocoConfig::read(options, env, c.mujoco);
  if (c.v5)
    c.forward_reward_weight =
        read_weight(options, env, "forward_reward_weight", c.forward_reward_weight);
  c.ctrl_cost_weight = read_weight(options, env, "ctrl_cost_weight", c.ctrl_cost_weight);
  if (c.v5)
    c.contact_cost_weight = read_weight(options, env, "contact_cost_weight", c.contact_cost_weight);
  c.healthy_reward = read_weight(options, env, "healthy_reward", c.healthy_reward);
  c.terminate_when_unhealthy =
      options.get_bool("terminate_when_unhealthy", c.terminate_when_unhealthy);
  return c;
}

Ant::Ant(const AntConfig& config)
    : MujocoEnv(kLayout, config.mujoco, blocks(config.v5)),
      config_(config),
      contact_squares_(static_cast<size_t>(kLayout.nbody * 6)) {
  RECUR_CHECK(mj_name2id(model(), mjOBJ_BODY, "torso") == kTorso,
              "Ant: body {} of {} is not \"torso\"; the reward follows body {}", kTorso,
              model_path(), kTorso);
}

bool Ant::is_healthy() const {
  const mjData* d = data();
  for (int i = 0; i < model()->nq; ++i)
    if (!std::isfinite(d->qpos[i])) return false;
  for (int i = 0; i < model()->nv; ++i)
    if (!std::isfinite(d->qvel[i])) return false;
  return 0.2 <= d->qpos[2] && d->qpos[2] <= 1.0;
}

void Ant::reset_impl(Rng& rng, std::optional<uint64_t> /*seed*/) {
  begin_reset();
  add_uniform_noise(rng, data()->qpos, model()->nq, reset_noise_scale());
  add_normal_noise(rng, data()->qvel, model()->nv, reset_noise_scale());
  finish_reset();
}

Env::Outcome Ant::step_impl(std::span<const float> action) {
  const double x_before = data()->xpos[3 * kTorso];
  simulate(action);
  const double x_velocity = (data()->xpos[3 * kTorso] - x_before) / dt();
  const bool healthy = is_healthy();
  const bool paid = healthy || (!config_.v5 && config_.terminate_when_unhealthy);
  const double rewards =
      x_velocity * config_.forward_reward_weight + (paid ? config_.healthy_reward : 0.0);
  const float ctrl_cost = numpy_ctrl_cost(config_.ctrl_cost_weight, action);
  Outcome out;
  if (config_.v5) {
    const double* f = data()->cfrc_ext;
    for (size_t i = 0; i < contact_squares_.size(); ++i) {
      const double c = std::clamp(f[i], -1.0, 1.0);
      contact_squares_[i] = c * c;
    }
    const double contact_cost =
        config_.contact_cost_weight * numpy_sum(std::span<const double>(contact_squares_));
    out.reward = rewards - (static_cast<double>(ctrl_cost) + contact_cost);
  } else {
    out.reward = rewards - ctrl_cost;
  }
  out.terminated = !healthy && config_.terminate_when_unhealthy;
  return out;
}

void Ant::observe(std::span<float> obs) const {
  const mjData* d = data();
  ObsWriter out(obs, obs_part());
  out.positions(d->qpos + 2, model()->nq - 2);
  out.velocities(d->qvel, model()->nv);
  if (config_.v5) out.other(d->cfrc_ext + 6, (model()->nbody - 1) * 6, 1.0);
}

}  // namespace recur::envs
