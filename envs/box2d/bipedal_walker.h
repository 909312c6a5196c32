// BipedalWalker-v3 and BipedalWalkerHardcore-v3, ported from Gymnasium 1.x
// (gymnasium/envs/box2d/bipedal_walker.py) onto Debian's Box2D 2.4.1. A 4-joint walker crosses
// 200 steps of random terrain (hardcore: with stumps, stairs and pits).
//   action  Box(-1, 1, (4,)): hip -1, knee -1, hip +1, knee +1. Each joint's motor runs at
//           speed 4 (hips) / 6 (knees) rad/s times sign(a) with a maximum torque of
//           80 clip(|a|, 0, 1) N m. As in Gymnasium, actions outside [-1, 1] are not clipped
//           (the sign and the clipped |a| are all that is used) and not refused.
//   obs     Box(24), float32: hull angle, 2 omega/FPS, 0.12 vx, 0.08 vy; per leg: hip angle,
//           hip speed/4, knee angle + 1, knee speed/6, lower-leg contact (0/1); 10 lidar
//           fractions (rays 0..1.35 rad from straight down, 160/30 m, closest terrain hit).
//           Bounds as Gymnasium's (+-pi / +-5 pattern, contacts [0, 5], lidar [-1, 1]); not
//           clipped.
//   reward  shaping = 130 x/30 - 5 |hull angle|; reward = shaping - previous shaping, minus
//           0.00035 * 80 * clip(|a_k|, 0, 1) per joint. float64 throughout: Gymnasium's reward is
//           float64 for float64 actions (its heuristic, the statistical reference) and float32
//           for float32 actions under NumPy 2 (NEP 50), i.e. the same value rounded to float32;
//           recur keeps the unrounded value.
//   ends    terminated with reward -100 when the hull touches the ground or x < 0; terminated
//           (no bonus) when x > 88.67 m (the finish); truncated at 1600 steps (hardcore 2000).
//
// Parity (docs/BOX2D.md): terrain, obstacles and clouds are bit-identical to Gymnasium's for the
// same draws, and observation/reward/termination are the same functions of the Box2D state; the
// physics is Box2D 2.4.1's, whose joint-limit and edge-collision solvers differ from the 2.3 that
// pybox2d ships, so trajectories agree over tens of steps and the heuristic's scores agree in
// distribution (tests/envs/box2d/bipedal_walker_*_test.cc). Every reset builds a new world: a
// seed always gives the same episode (Gymnasium reuses its world, so only a fresh Gymnasium env's
// first episode is reproducible; that is the one recur matches).
//
// state_size() is 0: the future of a Box2D world depends on more than positions and velocities
// (contact manifolds, warm-starting impulses, sleep timers, broad-phase order), which cannot be
// written to and restored from a flat vector. Snapshots of this env restart an episode from the
// saved RNG instead.
//
// No NoVel variant: rl-baselines3-zoo's MaskVelocityWrapper defines velocity indices for
// CartPole, MountainCar(Continuous), Pendulum and LunarLander(Continuous) only, none for
// BipedalWalker, and recur does not invent one.
//
// Allocation: reset allocates (a new world, terrain storage on the first reset); a step allocates
// nothing in the steady state (see envs/box2d/bipedal_walker_physics.h for what Box2D does).
#pragma once

#include "core/options.h"
#include "envs/box2d/bipedal_walker_physics.h"
#include "envs/box2d/bipedal_walker_terrain.h"
#include "envs/env.h"

namespace recur::envs {

struct BipedalWalkerConfig {
  bool hardcore = false;  // Gymnasium's hardcore constructor argument

  // Reads the option `hardcore`, defaulting to the registered id's value.
  static BipedalWalkerConfig read(OptionReader& options, bool hardcore_default = false);
};

class BipedalWalker final : public Env {
 public:
  explicit BipedalWalker(const BipedalWalkerConfig& config = {});

  // Gymnasium's rgb_array scene, 600x400 at 50 fps, scrolling with the hull: sky, clouds at
  // half speed, grass, terrain edges, obstacles, legs, hull, start flag, and the lidar ray
  // Gymnasium animates. Gymnasium advances that animation once per render() call (mutable
  // render state); recur derives it from the steps since reset instead, ray (steps + 1) % 100,
  // which is the same picture when rendering once per step and keeps draw() a function of state.
  RenderInfo render_info() const override;
  void draw(render::Canvas& canvas) const override;

  const BipedalWalkerConfig& config() const { return config_; }
  const bipedal::Physics& physics() const { return physics_; }

 private:
  void reset_impl(Rng& rng, std::optional<uint64_t> seed) override;
  Outcome step_impl(std::span<const float> action) override;
  void observe(std::span<float> obs) const override;

  BipedalWalkerConfig config_;
  bipedal::Terrain terrain_;
  bipedal::Physics physics_;
  int steps_ = 0;  // since reset, for the lidar picture
};

}  // namespace recur::envs
