#include "envs/mujoco/planar_locomotion.h"

#include <limits>

#include <mujoco/mujoco.h>

#include "core/error.h"
#include "envs/mujoco/numpy_sum.h"

namespace recur::envs {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

MujocoLayout layout(PlanarRobot robot, bool v5) {
  switch (robot) {
    case PlanarRobot::kHalfCheetah:
      return {"HalfCheetah", "half_cheetah.xml", 9, 9, 6, 8};
    case PlanarRobot::kHopper:
      return {"Hopper", "hopper.xml", 6, 6, 3, 5};
    case PlanarRobot::kWalker2d:
      break;
  }
  return {"Walker2d", v5 ? "walker2d_v5.xml" : "walker2d.xml", 9, 9, 6, 8};
}

ObsBlocks blocks(PlanarRobot robot) {
  const MujocoLayout l = layout(robot, true);
  return {l.nq - 1, l.nv, 0};  // qpos[0] (x) is left out, as Gymnasium's default
}

bool open_interval(double low, double x, double high) {
  return low < x && x < high;
}

}  // namespace

PlanarConfig PlanarConfig::defaults(PlanarRobot robot, bool v5, ObsPart part) {
  PlanarConfig c;
  c.v5 = v5;
  c.mujoco.part = part;
  if (robot == PlanarRobot::kHalfCheetah) {
    c.mujoco.frame_skip = 5;
    c.mujoco.reset_noise_scale = 0.1;
    c.ctrl_cost_weight = 0.1;
    c.healthy_reward = 0;
    c.terminate_when_unhealthy = false;
  } else {
    c.mujoco.frame_skip = 4;
    c.mujoco.reset_noise_scale = 5e-3;
  }
  return c;
}

PlanarConfig PlanarConfig::read(OptionReader& options, const std::string& env, PlanarRobot robot,
                                PlanarConfig defaults) {
  PlanarConfig c = defaults;
  c.mujoco = MujocoConfig::read(options, env, c.mujoco);
  c.forward_reward_weight =
      read_weight(options, env, "forward_reward_weight", c.forward_reward_weight);
  c.ctrl_cost_weight = read_weight(options, env, "ctrl_cost_weight", c.ctrl_cost_weight);
  if (robot != PlanarRobot::kHalfCheetah) {
    c.healthy_reward = read_weight(options, env, "healthy_reward", c.healthy_reward);
    c.terminate_when_unhealthy =
        options.get_bool("terminate_when_unhealthy", c.terminate_when_unhealthy);
  }
  return c;
}

PlanarLocomotion::PlanarLocomotion(PlanarRobot robot, const PlanarConfig& config)
    : MujocoEnv(layout(robot, config.v5), config.mujoco, blocks(robot)),
      robot_(robot),
      config_(config),
      velocity_clip_(robot == PlanarRobot::kHalfCheetah ? kInf : 10.0) {}

bool PlanarLocomotion::is_healthy() const {
  const mjData* d = data();
  const double z = d->qpos[1], angle = d->qpos[2];
  switch (robot_) {
    case PlanarRobot::kHalfCheetah:
      return true;
    case PlanarRobot::kHopper: {
      const int nq = model()->nq, nv = model()->nv;
      for (int i = 2; i < nq; ++i)
        if (!open_interval(-100.0, d->qpos[i], 100.0)) return false;
      for (int i = 0; i < nv; ++i)
        if (!open_interval(-100.0, d->qvel[i], 100.0)) return false;
      return open_interval(0.7, z, kInf) && open_interval(-0.2, angle, 0.2);
    }
    case PlanarRobot::kWalker2d:
      break;
  }
  return open_interval(0.8, z, 2.0) && open_interval(-1.0, angle, 1.0);
}

void PlanarLocomotion::reset_impl(Rng& rng, std::optional<uint64_t> /*seed*/) {
  begin_reset();
  mjData* d = data();
  const double s = reset_noise_scale();
  add_uniform_noise(rng, d->qpos, model()->nq, s);
  if (robot_ == PlanarRobot::kHalfCheetah) {
    add_normal_noise(rng, d->qvel, model()->nv, s);
  } else {
    add_uniform_noise(rng, d->qvel, model()->nv, s);
  }
  finish_reset();
}

Env::Outcome PlanarLocomotion::step_impl(std::span<const float> action) {
  const double x_before = data()->qpos[0];
  simulate(action);
  const double x_velocity = (data()->qpos[0] - x_before) / dt();
  const float ctrl_cost = numpy_ctrl_cost(config_.ctrl_cost_weight, action);
  const double forward = config_.forward_reward_weight * x_velocity;
  Outcome out;
  if (robot_ == PlanarRobot::kHalfCheetah) {
    out.reward = forward - ctrl_cost;
    return out;
  }
  const bool healthy = is_healthy();
  // Gymnasium's expression order: (forward + healthy) - ctrl.
  const bool paid = healthy || (!config_.v5 && config_.terminate_when_unhealthy);
  out.reward = (forward + (paid ? config_.healthy_reward : 0.0)) - ctrl_cost;
  out.terminated = !healthy && config_.terminate_when_unhealthy;
  return out;
}

void PlanarLocomotion::observe(std::span<float> obs) const {
  const mjData* d = data();
  ObsWriter out(obs, obs_part());
  out.positions(d->qpos + 1, model()->nq - 1);
  out.velocities(d->qvel, model()->nv, velocity_clip_);
}

}  // namespace recur::envs
