// LunarLander-v3 and LunarLanderContinuous-v3, ported from Gymnasium 1.x
// (gymnasium/envs/box2d/lunar_lander.py) onto Debian's Box2D 2.4.1. Land a rocket on the pad
// between the flags.
//   action  LunarLander-v3: Discrete(4): 0 nothing, 1 left orientation engine (side engine,
//           direction -1), 2 main engine, 3 right orientation engine (direction +1).
//           LunarLanderContinuous-v3: Box(-1, 1, (2,)), clipped to [-1, 1]: a0 > 0 fires the main
//           engine at (a0 + 1) / 2; |a1| > 0.5 fires a side engine (sign(a1)) at |a1|.
//   obs     Box(8): [(x - 10) / 10, (y - 3.933) / 6.667, 0.2 vx, 0.133 vy, angle, 0.4 omega,
//           leg0 contact, leg1 contact] (position in m, speeds in m/s and rad/s); bounds (v3)
//           +-[2.5, 2.5, 10, 10, 2 pi, 10], [0, 1] x 2, not clipped.
//   reward  difference of the shaping -100 |pos| - 100 |vel| - 100 |angle| + 10 per leg contact,
//           minus 0.3 per frame of main engine and 0.03 of side engine (times the throttle);
//           -100 on a crash, +100 when the lander comes to rest (these replace the step's reward).
//   ends    terminated on a crash (the hull touches the ground, or |x| >= 10 m from the centre:
//           obs[0] out of [-1, 1]) or at rest (Box2D puts the lander to sleep); truncated at
//           1000 steps by the registry.
// Options: gravity (m/s^2, -12 < g < 0, default -10), enable_wind (false), wind_power (15,
// Gymnasium's sensible range [0, 20]: outside it recur logs a warning, as Gymnasium does, and
// runs), turbulence_power (1.5, [0, 2], likewise). The ids fix `continuous`.
//
// Randomness, in Gymnasium's order and count (recur's Rng, so the draws differ from numpy's):
// reset draws 12 terrain heights, the initial force (x, then y), with wind the two start indices,
// then runs one no-op step (2 dispersion draws, its reward discarded, it sets prev_shaping); every
// step draws 2 dispersions whether or not an engine fires.
//
// state_size() is 0: the env's state is a Box2D world (bodies, joints, contacts with their warm-
// started impulses, broad-phase tree, sleep timers), which cannot be written out as a flat vector
// and restored to give the same future. A new world is built on every reset (as v3).
//
// Rendering: Gymnasium's 600x400 scene at 50 fps (black sky over white ground, the lander, its
// legs, the flags). Gymnasium's engine particles are not drawn: they are decoration only (no
// effect on physics or RNG) and would need bodies created during steps.
#pragma once

#include <memory>
#include <optional>

#include "core/options.h"
#include "envs/box2d/lunar_lander_sim.h"
#include "envs/env.h"

namespace recur::envs {

struct LunarLanderConfig {
  bool continuous = false;  // fixed by the id
  double gravity = -10.0;   // m/s^2, in (-12, 0)
  bool enable_wind = false;
  double wind_power = 15.0;       // N
  double turbulence_power = 1.5;  // N m

  // Reads gravity, enable_wind, wind_power, turbulence_power; `continuous` comes from the id.
  static LunarLanderConfig read(OptionReader& options, bool continuous);
};

class LunarLander final : public Env {
 public:
  explicit LunarLander(const LunarLanderConfig& config = {});

  const lunar_lander::Sim& sim() const { return sim_; }

  // Test hook: the next reset() takes these reset draws and the two dispersion draws of its
  // no-op step instead of drawing them (later steps draw from the Rng as usual). Gymnasium's
  // recorded episodes replay through lunar_lander::Sim directly; this checks the adapter.
  void replay_next_reset(const lunar_lander::ResetDraws& draws, double u0, double u1);

  RenderInfo render_info() const override;
  void draw(render::Canvas& canvas) const override;

 private:
  void reset_impl(Rng& rng, std::optional<uint64_t> seed) override;
  Outcome step_impl(std::span<const float> action) override;
  void observe(std::span<float> obs) const override;
  // A new world from the draws, then Gymnasium's no-op step (its reward discarded).
  void start(const lunar_lander::ResetDraws& draws, double u0, double u1);

  LunarLanderConfig config_;
  lunar_lander::Sim sim_;
  struct Replay {
    lunar_lander::ResetDraws draws;
    double u0 = 0, u1 = 0;
  };
  std::optional<Replay> replay_;  // set by replay_next_reset, used once
  Rng* rng_ = nullptr;            // the base class's Rng, for the dispersion draws of every step
};

}  // namespace recur::envs
