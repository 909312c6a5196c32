// LunarLander's physics on Box2D 2.4.1: the world, the lander and its legs, the contact flags.
// It knows Box2D only (no Env, no RNG): every random number comes in as an argument, so tests can
// replay Gymnasium's draws (tests/envs/box2d/lunar_lander_replay_test.cc); envs/box2d/
// lunar_lander.h draws them and adapts this class to the Env interface.
//
// Parity: same bodies, fixtures, joints and creation order as Gymnasium (lunar_lander.py), but
// Box2D 2.4.1's solver is not pybox2d's 2.3 (predictive joint limits, rewritten edge collision,
// different gravity integration), so trajectories agree closely for some steps and then drift:
// the promise is "same MDP, statistically equal" (docs/BOX2D.md).
//
// Memory: build() creates a new b2World (Gymnasium v3 does so on every reset) and its bodies;
// step() allocates nothing itself. Box2D allocates through b2Alloc (malloc, not operator new):
// contacts come from its block allocator, which keeps freed blocks for reuse, and the solver's
// per-step arrays from its stack allocator (a 100 KiB buffer inside b2World). Measured with a
// counting malloc over 50 heuristic episodes per id: 12 malloc calls per reset and exactly one
// per episode in its steps (the block allocator's first 16 KiB chunk, at the first contact of
// the fresh world); none otherwise.
#pragma once

#include <box2d/box2d.h>

#include <array>
#include <memory>
#include <optional>
#include <span>

#include "envs/box2d/lunar_lander_math.h"

namespace recur::envs::lunar_lander {

struct SimConfig {
  bool continuous = false;
  double gravity = -10.0;  // m/s^2
  bool enable_wind = false;
  double wind_power = 15.0;       // N, amplitude of the wind force
  double turbulence_power = 1.5;  // N m, amplitude of the turbulence torque
};

// The reset draws, in Gymnasium's order: 12 terrain heights ~ U(0, H/2), the initial force
// ~ U(-1000, 1000) (x first), and with wind the two start indices ~ integers(-9999, 9999).
struct ResetDraws {
  std::array<double, kChunks + 1> heights{};
  double force_x = 0, force_y = 0;  // N
  int wind_idx = 0, torque_idx = 0;
};

class Sim {
 public:
  explicit Sim(const SimConfig& config);
  ~Sim();
  Sim(const Sim&) = delete;
  Sim& operator=(const Sim&) = delete;

  // A new world with terrain, lander (initial force applied) and legs; no step yet. Gymnasium's
  // reset then runs one step with the no-op action (the caller does: step()).
  void build(const ResetDraws& draws);

  // One step: wind, engines (with dispersion draws u0, u1 ~ U(-1, 1)), world.Step, state, reward
  // and termination. `action` as Gymnasium's (continuous: 2 values, clipped here; discrete: the
  // index as a float, already validated). The reward of the step inside reset is meaningless
  // (it sets prev_shaping).
  Outcome step(std::span<const float> action, double u0, double u1);

  const State& state() const { return state_; }
  BodyState body() const;
  bool game_over() const { return game_over_; }
  bool awake() const;
  const Terrain& terrain() const { return terrain_; }
  std::optional<double> prev_shaping() const { return prev_shaping_; }
  const SimConfig& config() const { return config_; }

  // For drawing and tests: the ground (its edge fixtures), the lander then the legs (Gymnasium's
  // drawlist); null before build().
  const b2Body* moon() const { return moon_; }
  const b2Body* lander() const { return lander_; }
  const b2Body* leg(int i) const { return legs_[i]; }

 private:
  class Contacts;  // the b2ContactListener setting the flags below

  void destroy();

  SimConfig config_;
  std::unique_ptr<Contacts> contacts_;
  std::unique_ptr<b2World> world_;
  b2Body* moon_ = nullptr;
  b2Body* lander_ = nullptr;
  b2Body* legs_[2] = {nullptr, nullptr};  // legs_[0] is Gymnasium's i = -1 leg (at x = W/2 + 0.667)
  bool leg_contact_[2] = {false, false};  // Gymnasium's leg.ground_contact (bools, not counters)
  bool game_over_ = false;
  int wind_idx_ = 0, torque_idx_ = 0;
  Terrain terrain_;
  State state_{};
  std::optional<double> prev_shaping_;
};

}  // namespace recur::envs::lunar_lander
