// MuJoCo locomotion envs with Gymnasium 1.4.0's ids, time limits and reward thresholds
// (gymnasium/envs/__init__.py), and partially observed variants of four of them:
//   <Name>-P-v4/-v5  only the joint positions of Gymnasium's observation (the qpos block)
//   <Name>-V-v4/-v5  only the joint velocities (the qvel block)
// with the full env's reward and termination (Ni et al. 2022 defined such -P/-V tasks on PyBullet;
// these are the same idea on Gymnasium's MuJoCo envs).
//
// Every id is registered in every build. A build without MuJoCo (RECUR_MUJOCO=OFF, or AUTO without
// the library) lists them as unavailable, and making one throws recur::Error saying how to get it.
//
// Options: frame_skip, reset_noise_scale, ctrl_cost_weight, forward_reward_weight, and where the
// env has them healthy_reward, terminate_when_unhealthy, contact_cost_weight (Gymnasium v5's
// keyword arguments). Gymnasium's xml_file is a field of MujocoConfig but not an option yet:
// OptionReader has no string getter.
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/error.h"
#include "envs/registry.h"

#include "envs/mujoco/ant.h"  // the env headers need no MuJoCo headers
#include "envs/mujoco/planar_locomotion.h"

namespace recur::envs {
namespace {

using Factory = std::function<std::unique_ptr<Env>(OptionReader&)>;

struct MujocoId {
  std::string id;
  int max_episode_steps;
  std::optional<double> reward_threshold;
  std::string summary;
  Factory factory;
};

// "HalfCheetah-P-v5" from ("HalfCheetah", part, "v5").
std::string id_of(const std::string& name, ObsPart part, const std::string& version) {
  const char* infix = part == ObsPart::kPositions ? "-P" : part == ObsPart::kVelocities ? "-V" : "";
  return name + infix + "-" + version;
}

std::string part_summary(ObsPart part) {
  switch (part) {
    case ObsPart::kPositions:
      return "; positions only (-P)";
    case ObsPart::kVelocities:
      return "; velocities only (-V)";
    case ObsPart::kFull:
      break;
  }
  return "";
}

#ifdef RECUR_HAVE_MUJOCO
Factory planar(PlanarRobot robot, bool v5, ObsPart part, std::string id) {
  return [=](OptionReader& options) -> std::unique_ptr<Env> {
    const auto config =
        PlanarConfig::read(options, id, robot, PlanarConfig::defaults(robot, v5, part));
    return std::make_unique<PlanarLocomotion>(robot, config);
  };
}

Factory ant(bool v5, ObsPart part, std::string id) {
  return [=](OptionReader& options) -> std::unique_ptr<Env> {
    AntConfig defaults;
    defaults.v5 = v5;
    defaults.mujoco.part = part;
    return std::make_unique<Ant>(AntConfig::read(options, id, defaults));
  };
}
#else
// Without MuJoCo every id throws when made.
Factory unavailable(std::string id) {
  return [id](OptionReader&) -> std::unique_ptr<Env> {
    throw Error(fmt::format(
        "env {} needs MuJoCo, and this build of recur has none: run tools/install-deps.sh (it "
        "installs MuJoCo 3.3.7 and Gymnasium's model files), then reconfigure with "
        "-DRECUR_MUJOCO=ON and rebuild",
        id));
  };
}
Factory planar(PlanarRobot, bool, ObsPart, std::string id) {
  return unavailable(std::move(id));
}
Factory ant(bool, ObsPart, std::string id) {
  return unavailable(std::move(id));
}
#endif

void add(Registry& r, MujocoId m) {
  EnvSpec spec{.id = m.id,
               .family = "mujoco",
               .max_episode_steps = m.max_episode_steps,
               .reward_threshold = m.reward_threshold,
               .summary = m.summary,
               .factory = std::move(m.factory)};
#ifndef RECUR_HAVE_MUJOCO
  spec.available = false;
  spec.summary += " (needs MuJoCo: this build has none)";
#endif
  r.add(std::move(spec));
}

}  // namespace

void register_mujoco(Registry& r) {
  struct Planar {
    PlanarRobot robot;
    const char* name;
    std::optional<double> threshold;
    const char* summary;
  };
  const Planar planars[] = {
      {PlanarRobot::kHalfCheetah, "HalfCheetah", 4800.0, "2D cheetah runs forward (MuJoCo)"},
      {PlanarRobot::kHopper, "Hopper", 3800.0, "2D one-legged hopper hops forward (MuJoCo)"},
      {PlanarRobot::kWalker2d, "Walker2d", std::nullopt, "2D biped walks forward (MuJoCo)"},
  };
  for (const ObsPart part : {ObsPart::kFull, ObsPart::kPositions, ObsPart::kVelocities}) {
    for (const Planar& p : planars) {
      for (const bool v5 : {false, true}) {
        const std::string id = id_of(p.name, part, v5 ? "v5" : "v4");
        add(r,
            {id, 1000, p.threshold, p.summary + part_summary(part), planar(p.robot, v5, part, id)});
      }
    }
    for (const bool v5 : {false, true}) {
      const std::string id = id_of("Ant", part, v5 ? "v5" : "v4");
      add(r, {id, 1000, 6000.0, "quadruped walks forward (MuJoCo)" + part_summary(part),
              ant(v5, part, id)});
    }
  }
}

}  // namespace recur::envs
