#include "envs/mujoco/reacher.h"

#include <cmath>

#include <mujoco/mujoco.h>

#include "core/error.h"
#include "envs/mujoco/numpy_sum.h"

namespace recur::envs {
namespace {

constexpr MujocoLayout kLayout{"Reacher", "reacher.xml", 4, 4, 2, 5};

ObsBlocks blocks(bool v5) {
  // cos, sin of the arm's angles and the target's position | arm velocities | fingertip - target
  return {2 * 2 + 2, 2, v5 ? 2 : 3};
}

int body_id(const mjModel* m, const char* name, const std::string& path) {
  const int id = mj_name2id(m, mjOBJ_BODY, name);
  RECUR_CHECK(id >= 0, "Reacher: the model {} has no body \"{}\"", path, name);
  return id;
}

}  // namespace

ReacherConfig ReacherConfig::read(OptionReader& options, const std::string& env, bool v5) {
  ReacherConfig c;
  c.v5 = v5;
  c.mujoco = MujocoConfig::read(options, env, c.mujoco);
  RECUR_CHECK(c.mujoco.reset_noise_scale == 0,
              "env {}: Reacher takes no reset_noise_scale (Gymnasium's Reacher has a fixed reset "
              "distribution); leave it out",
              env);
  c.reward_dist_weight = read_weight(options, env, "reward_dist_weight", c.reward_dist_weight);
  c.reward_control_weight =
      read_weight(options, env, "reward_control_weight", c.reward_control_weight);
  return c;
}

Reacher::Reacher(const ReacherConfig& config)
    : MujocoEnv(kLayout, config.mujoco, blocks(config.v5)),
      config_(config),
      fingertip_(body_id(model(), "fingertip", model_path())),
      target_(body_id(model(), "target", model_path())) {}

void Reacher::reset_impl(Rng& rng, std::optional<uint64_t> /*seed*/) {
  begin_reset();
  mjData* d = data();
  add_uniform_noise(rng, d->qpos, model()->nq, 0.1);
  double gx = 0, gy = 0;
  do {
    gx = rng.uniform(-0.2, 0.2);
    gy = rng.uniform(-0.2, 0.2);
  } while (!(std::sqrt(gx * gx + gy * gy) < 0.2));
  d->qpos[2] = gx;
  d->qpos[3] = gy;
  add_uniform_noise(rng, d->qvel, model()->nv, 0.005);
  d->qvel[2] = d->qvel[3] = 0;
  finish_reset();
}

double Reacher::distance() const {
  const double* f = data()->xpos + 3 * fingertip_;
  const double* t = data()->xpos + 3 * target_;
  const double dx = f[0] - t[0], dy = f[1] - t[1], dz = f[2] - t[2];
  return std::sqrt(dx * dx + dy * dy + dz * dz);
}

Env::Outcome Reacher::step_impl(std::span<const float> action) {
  // v4 measures the distance before the step, v5 after it.
  double dist = config_.v5 ? 0.0 : distance();
  simulate(action);
  if (config_.v5) dist = distance();
  // Gymnasium: -norm * w_dist (float64) + -sum(a^2) * w_ctrl (float32, NEP 50).
  Outcome out;
  out.reward =
      -dist * config_.reward_dist_weight - numpy_ctrl_cost(config_.reward_control_weight, action);
  return out;
}

void Reacher::observe(std::span<float> obs) const {
  const mjData* d = data();
  size_t at = 0;
  for (int i = 0; i < 2; ++i) obs[at++] = static_cast<float>(std::cos(d->qpos[i]));
  for (int i = 0; i < 2; ++i) obs[at++] = static_cast<float>(std::sin(d->qpos[i]));
  for (int i = 2; i < 4; ++i) obs[at++] = static_cast<float>(d->qpos[i]);
  for (int i = 0; i < 2; ++i) obs[at++] = static_cast<float>(d->qvel[i]);
  const int n = config_.v5 ? 2 : 3;
  for (int i = 0; i < n; ++i)
    obs[at++] = static_cast<float>(d->xpos[3 * fingertip_ + i] - d->xpos[3 * target_ + i]);
}

}  // namespace recur::envs
