// MuJoCo envs with Gymnasium 1.4.0's ids, time limits and reward thresholds
// (gymnasium/envs/__init__.py): HalfCheetah, Hopper, Walker2d, Ant, Swimmer, InvertedPendulum,
// InvertedDoublePendulum, Reacher and Humanoid, v4 and v5 each, and partially observed variants
// of the first four:
//   <Name>-P-v4/-v5  only the joint positions of Gymnasium's observation (the qpos block)
//   <Name>-V-v4/-v5  only the joint velocities (the qvel block)
// with the full env's reward and termination (Ni et al. 2022 defined such -P/-V tasks on PyBullet;
// these are the same idea on Gymnasium's MuJoCo envs).
//
// Every id is registered in every build. A build without MuJoCo (RECUR_MUJOCO=OFF, or AUTO without
// the library) lists them as unavailable, and making one throws recur::Error saying how to get it.
//
// Options: xml_file, frame_skip, reset_noise_scale (not Reacher), and where the env has them
// ctrl_cost_weight, forward_reward_weight, healthy_reward, terminate_when_unhealthy,
// contact_cost_weight, reward_dist_weight, reward_control_weight (Gymnasium v5's keyword
// arguments; xml_file is looked up as envs/mujoco/model_cache.h says).
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/error.h"
#include "envs/registry.h"

#include "envs/mujoco/ant.h"  // the env headers need no MuJoCo headers
#include "envs/mujoco/humanoid.h"
#include "envs/mujoco/inverted_double_pendulum.h"
#include "envs/mujoco/inverted_pendulum.h"
#include "envs/mujoco/planar_locomotion.h"
#include "envs/mujoco/reacher.h"
#include "envs/mujoco/swimmer.h"

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

// The envs whose config reads (options, id, v5).
template <typename E, typename Config>
Factory versioned(bool v5, std::string id) {
  return [=](OptionReader& options) -> std::unique_ptr<Env> {
    return std::make_unique<E>(Config::read(options, id, v5));
  };
}
Factory swimmer(bool, std::string id) {
  return [=](OptionReader& options) -> std::unique_ptr<Env> {
    return std::make_unique<Swimmer>(SwimmerConfig::read(options, id));
  };
}
Factory inverted_pendulum(bool v5, std::string id) {
  return versioned<InvertedPendulum, InvertedPendulumConfig>(v5, std::move(id));
}
Factory inverted_double_pendulum(bool v5, std::string id) {
  return versioned<InvertedDoublePendulum, InvertedDoublePendulumConfig>(v5, std::move(id));
}
Factory reacher(bool v5, std::string id) {
  return versioned<Reacher, ReacherConfig>(v5, std::move(id));
}
Factory humanoid(bool v5, std::string id) {
  return versioned<Humanoid, HumanoidConfig>(v5, std::move(id));
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
Factory swimmer(bool, std::string id) {
  return unavailable(std::move(id));
}
Factory inverted_pendulum(bool, std::string id) {
  return unavailable(std::move(id));
}
Factory inverted_double_pendulum(bool, std::string id) {
  return unavailable(std::move(id));
}
Factory reacher(bool, std::string id) {
  return unavailable(std::move(id));
}
Factory humanoid(bool, std::string id) {
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
  // Full observations only.
  struct Other {
    const char* name;
    int max_episode_steps;
    std::optional<double> threshold;
    const char* summary;
    Factory (*factory)(bool, std::string);
  };
  const Other others[] = {
      {"Swimmer", 1000, 360.0, "three-link swimmer swims forward in a viscous fluid (MuJoCo)",
       swimmer},
      {"InvertedPendulum", 1000, 950.0, "cart keeps a pole upright (MuJoCo)", inverted_pendulum},
      {"InvertedDoublePendulum", 1000, 9100.0, "cart balances two stacked poles (MuJoCo)",
       inverted_double_pendulum},
      {"Reacher", 50, -3.75, "two-joint arm reaches a random target (MuJoCo)", reacher},
      {"Humanoid", 1000, std::nullopt, "3D humanoid walks forward (MuJoCo)", humanoid},
  };
  for (const Other& o : others) {
    for (const bool v5 : {false, true}) {
      const std::string id = id_of(o.name, ObsPart::kFull, v5 ? "v5" : "v4");
      add(r, {id, o.max_episode_steps, o.threshold, o.summary, o.factory(v5, id)});
    }
  }
}

}  // namespace recur::envs
