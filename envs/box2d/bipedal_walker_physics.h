// BipedalWalker's Box2D world (Gymnasium's bipedal_walker.py), on Box2D 2.4.1:
// the class knows Box2D and nothing of recur's Env; envs/box2d/bipedal_walker.h adapts it.
//
// Bodies are created in Gymnasium's order (terrain obstacles, the 199 terrain edges, hull, then
// per side i = -1, +1: upper leg, hip, lower leg, knee), with positions computed in float64 and
// cast to float as pybox2d does. Differences from pybox2d that are deliberate:
//   * a new b2World on every reset (Gymnasium reuses one, which makes its episodes depend on the
//     ones before; a fresh Gymnasium env per episode is what recur reproduces);
//   * revolute joints get Gymnasium's referenceAngle explicitly (pybox2d sets bodyB.angle -
//     bodyA.angle): hips -0.05 / +0.05, knees 0;
//   * terrain edges are two-sided (b2EdgeShape::SetTwoSided), as every 2.3 edge.
// Box2D 2.4.1's joint-limit and edge solvers differ from 2.3 (docs/BOX2D.md), so trajectories
// match Gymnasium's only over short horizons and in distribution, not bit for bit.
//
// Allocation: reset allocates: the b2World (operator new) and, through b2Alloc (malloc), Box2D's
// broad-phase tree, block-allocator chunks and bodies/fixtures/joints (measured by interposing
// malloc: 31 calls per reset, 32 hardcore; the reset's zero-action step included). A step
// allocates nothing: Box2D takes contacts and solver scratch from the world's block and stack
// allocators, which grow only when more contacts exist at once than ever before in the world
// (measured: 0 malloc calls in 51201 normal and 17578 hardcore heuristic steps over 50 episodes
// each). The lidar and contact callbacks write into fixed members.
#pragma once

#include <box2d/box2d.h>

#include <array>
#include <memory>
#include <span>
#include <vector>

#include "envs/box2d/bipedal_walker_terrain.h"

namespace recur::envs::bipedal {

inline constexpr int kObsDim = 24;
inline constexpr int kLidarRays = 10;
inline constexpr double kMotorsTorque = 80;
inline constexpr double kSpeedHip = 4;
inline constexpr double kSpeedKnee = 6;
inline constexpr double kLidarRange = 160 / kScale;
inline constexpr double kFps = 50;
inline constexpr double kViewportW = 600;
inline constexpr double kViewportH = 400;
inline constexpr double kInitialRandom = 5;  // the hull's push ~ U(-5, 5) [N]
// x beyond which an episode ends (the finish, 10 grass steps before the terrain's end).
inline constexpr double kFinishX = (kTerrainLength - kTerrainGrass) * kTerrainStep;

// What the observation and reward read from the world after a step: Box2D's float values
// (pybox2d hands them to Python as float64; so does this struct).
struct WalkerState {
  double x = 0, y = 0;                     // hull position [m]
  double vx = 0, vy = 0;                   // hull linear velocity [m/s]
  double angle = 0;                        // hull angle [rad]
  double omega = 0;                        // hull angular velocity [rad/s]
  std::array<double, 4> joint_angle{};     // hip -1, knee -1, hip +1, knee +1 [rad]
  std::array<double, 4> joint_speed{};     // [rad/s]
  std::array<bool, 2> contact{};           // lower legs -1, +1 touch the ground
  std::array<double, kLidarRays> lidar{};  // fraction of the ray to the closest terrain hit
};

// Gymnasium's 24 floats: [angle, 2 omega/FPS, 0.3 vx (W/S)/FPS, 0.3 vy (H/S)/FPS, then per leg
// hip angle, hip speed/4, knee angle + 1, knee speed/6, contact], then the lidar fractions.
// Computed in float64, rounded to float32 once.
void observe(const WalkerState& s, std::span<float> obs);
// shaping = 130 x / SCALE - 5 |angle| (float64). The reward of a step is shaping - previous
// shaping (0 on the reset step) minus the torque cost.
double shaping(const WalkerState& s);
// reward minus 0.00035 * 80 * clip(|a|, 0, 1) for each action entry in turn (one subtraction
// per entry, as Gymnasium's loop), in float64.
double subtract_torque_cost(double reward, std::span<const float> action);
struct StepReward {
  double reward = 0;
  bool terminated = false;
};
// Termination: game over (the hull touched the ground) or x < 0 -> reward -100, terminated;
// x > kFinishX -> terminated, reward unchanged (both: -100).
StepReward finish(double reward, bool game_over, double x);

class Physics {
 public:
  Physics();
  ~Physics();
  Physics(const Physics&) = delete;
  Physics& operator=(const Physics&) = delete;

  // Builds a new world on `terrain`, pushes the hull with (push_x, 0) and runs Gymnasium's
  // reset step (zero action). `terrain` must outlive the next reset (it is kept for pictures).
  void reset(const Terrain& terrain, double push_x);
  // One step: motors from `action` (4 floats, not clipped; |a| is clipped for the torque),
  // world.Step(1/50, 180, 60), lidar. Returns the reward and termination; updates state().
  StepReward step(std::span<const float> action);

  const WalkerState& state() const { return state_; }
  bool game_over() const { return game_over_; }
  const Terrain& terrain() const { return *terrain_; }

  // For pictures: the world's bodies and the lidar rays of the last step (p1, end point).
  const b2Body* hull() const { return hull_; }
  const std::array<b2Body*, 4>& legs() const { return legs_; }
  std::span<b2Body* const> obstacle_bodies() const {
    return {obstacles_.data(), obstacles_.size()};
  }
  b2Vec2 lidar_from() const { return lidar_p1_; }
  const std::array<b2Vec2, kLidarRays>& lidar_to() const { return lidar_p2_; }

 private:
  class Contacts;  // b2ContactListener: game over, lower-leg contacts
  class Lidar;     // b2RayCastCallback: closest terrain hit
  void read_state();

  std::unique_ptr<b2World> world_;
  std::unique_ptr<Contacts> contacts_;
  std::unique_ptr<Lidar> lidar_;
  const Terrain* terrain_ = nullptr;
  std::vector<b2Body*> obstacles_;
  b2Body* hull_ = nullptr;
  std::array<b2Body*, 4> legs_{};  // upper -1, lower -1, upper +1, lower +1
  std::array<b2RevoluteJoint*, 4> joints_{};
  bool game_over_ = false;
  std::array<bool, 2> contact_{};
  double prev_shaping_ = 0;
  bool has_prev_shaping_ = false;
  // Ray ends relative to the hull position (sin/cos(1.5 i / 10) * range), computed once.
  std::array<double, kLidarRays> ray_dx_{}, ray_dy_{};
  b2Vec2 lidar_p1_{0, 0};
  std::array<b2Vec2, kLidarRays> lidar_p2_{};
  WalkerState state_;
};

}  // namespace recur::envs::bipedal
