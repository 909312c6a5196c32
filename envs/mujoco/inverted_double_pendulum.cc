#include "envs/mujoco/inverted_double_pendulum.h"

#include <algorithm>
#include <cmath>

#include <mujoco/mujoco.h>

#include "core/error.h"

namespace recur::envs {
namespace {

constexpr MujocoLayout kLayout{
    "InvertedDoublePendulum", "inverted_double_pendulum.xml", 3, 3, 1, 4};

ObsBlocks blocks(bool v5) {
  // cart, sin and cos of the hinges | velocities | constraint forces
  return {1 + 2 * (kLayout.nq - 1), kLayout.nv, v5 ? 1 : kLayout.nv};
}

}  // namespace

InvertedDoublePendulumConfig InvertedDoublePendulumConfig::read(OptionReader& options,
                                                                const std::string& env, bool v5) {
  InvertedDoublePendulumConfig c;
  c.v5 = v5;
  c.mujoco = MujocoConfig::read(options, env, c.mujoco);
  c.healthy_reward = read_weight(options, env, "healthy_reward", c.healthy_reward);
  return c;
}

InvertedDoublePendulum::InvertedDoublePendulum(const InvertedDoublePendulumConfig& config)
    : MujocoEnv(kLayout, config.mujoco, blocks(config.v5)), config_(config) {
  RECUR_CHECK(model()->nsite >= 1,
              "InvertedDoublePendulum: {} has no site; the reward follows "
              "the pole's tip (site 0)",
              model_path());
}

void InvertedDoublePendulum::reset_impl(Rng& rng, std::optional<uint64_t> /*seed*/) {
  begin_reset();
  add_uniform_noise(rng, data()->qpos, model()->nq, reset_noise_scale());
  add_normal_noise(rng, data()->qvel, model()->nv, reset_noise_scale());
  finish_reset();
}

Env::Outcome InvertedDoublePendulum::step_impl(std::span<const float> action) {
  simulate(action);
  const mjData* d = data();
  const double x = d->site_xpos[0], y = d->site_xpos[2];
  const double v1 = d->qvel[1], v2 = d->qvel[2];
  Outcome out;
  out.terminated = y <= 1.0;
  // Gymnasium's expression order: alive - dist_penalty - vel_penalty.
  const double dist_penalty = 0.01 * (x * x) + (y - 2.0) * (y - 2.0);
  const double vel_penalty = 1e-3 * (v1 * v1) + 5e-3 * (v2 * v2);
  const double alive = config_.v5 && out.terminated ? 0.0 : config_.healthy_reward;
  out.reward = alive - dist_penalty - vel_penalty;
  return out;
}

void InvertedDoublePendulum::observe(std::span<float> obs) const {
  const mjData* d = data();
  const int nq = model()->nq, nv = model()->nv;
  size_t at = 0;
  obs[at++] = static_cast<float>(d->qpos[0]);
  for (int i = 1; i < nq; ++i) obs[at++] = static_cast<float>(std::sin(d->qpos[i]));
  for (int i = 1; i < nq; ++i) obs[at++] = static_cast<float>(std::cos(d->qpos[i]));
  for (int i = 0; i < nv; ++i) obs[at++] = static_cast<float>(std::clamp(d->qvel[i], -10.0, 10.0));
  const int constraints = config_.v5 ? 1 : nv;
  for (int i = 0; i < constraints; ++i)
    obs[at++] = static_cast<float>(std::clamp(d->qfrc_constraint[i], -10.0, 10.0));
}

}  // namespace recur::envs
