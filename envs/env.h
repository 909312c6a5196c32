// The environment interface, with Gymnasium 1.x semantics.
//
//   obs = env.reset(seed);                      // first observation of an episode
//   auto r = env.step(action);                  // r.obs, r.reward, r.terminated, r.truncated
//
// The base class owns all episode bookkeeping, in one place: the time limit (truncation, taken
// from the registry and overridable), elapsed steps, episode return, the episode_start flag of the
// next step, "step after the episode ended" and "step before reset" errors, and validation of
// actions against the action space. An env author writes only three things: reset_impl (draw the
// initial state), step_impl (physics and reward, reporting termination) and observe (state ->
// float32 observation). See envs/classic/cartpole.h for the pattern.
//
// terminated and truncated are always separate: terminated means the MDP reached a terminal
// state (no bootstrap); truncated means the time limit cut the episode (bootstrap from the final
// observation). Both can be true on the same step, as with Gymnasium's TimeLimit.
//
// No step allocates: observations are written into a buffer sized at construction, and the
// returned spans point into it (valid until the next reset/step).
//
// Rendering (Gymnasium's render_mode="rgb_array") is off the step path: an env that renders says
// its frame size and fps in render_info() and paints its current state in draw(); a
// render::Renderer (envs/render/renderer.h) owns the canvas and hands back frames.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/rng.h"
#include "envs/space.h"

namespace recur::envs {

namespace render {
class Canvas;
}

// How an env renders: Gymnasium's screen size and metadata["render_fps"]. fps 0: no rendering.
struct RenderInfo {
  int width = 0;   // px
  int height = 0;  // px
  int fps = 0;     // frames per second of env time, for videos
  bool renders() const { return fps > 0; }
};

struct StepResult {
  std::span<const float> obs;  // (obs_dim,) the observation after the step
  double reward = 0;
  bool terminated = false;
  bool truncated = false;
  bool done() const { return terminated || truncated; }
};

class Env {
 public:
  virtual ~Env() = default;
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;

  const std::string& id() const { return id_; }
  const Space& observation_space() const { return observation_space_; }
  const Space& action_space() const { return action_space_; }
  int obs_dim() const { return observation_space_.flat_size(); }
  int action_dim() const { return action_space_.flat_size(); }
  // Steps after which an episode is truncated; 0 means no time limit.
  int max_episode_steps() const { return max_episode_steps_; }
  void set_max_episode_steps(int steps);

  // Starts an episode. With a seed the env's RNG is reseeded (the same seed always gives the same
  // episode); without one the RNG continues, as Gymnasium's reset(seed=None). An env that was
  // never seeded takes its seed from std::random_device on its first reset.
  std::span<const float> reset(uint64_t seed);
  std::span<const float> reset();

  // Advances one timestep. Throws std::invalid_argument when the action is not in the action
  // space (wrong size, NaN/inf, Discrete index not an integer in [0, n)); Box actions outside the
  // bounds are accepted and clipped by envs where Gymnasium clips. Throws std::logic_error when
  // called before reset() or after the episode ended.
  StepResult step(std::span<const float> action);

  // The checks step() makes on an action, alone: throws std::invalid_argument naming the env and
  // the value. Lets callers validate a whole batch before stepping any env.
  void validate_action(std::span<const float> action) const;

  std::span<const float> observation() const { return obs_; }
  int elapsed_steps() const { return elapsed_steps_; }
  double episode_return() const { return episode_return_; }
  // True when the next step is the first of an episode (right after reset).
  bool episode_start() const { return elapsed_steps_ == 0; }
  // True once the episode has ended (terminated or truncated) and until the next reset.
  bool needs_reset() const { return needs_reset_; }

  // The env's physical state (Gymnasium's env.unwrapped.state), for checks, tests and tools that
  // replay or inspect dynamics. size 0 when the env does not expose one. set_state replaces the
  // state and recomputes the observation; bookkeeping (elapsed steps, return) is unchanged.
  virtual int state_size() const { return 0; }
  virtual void get_state(std::span<double> out) const;
  void set_state(std::span<const double> state);

  // Rendering. render_info() is {} (no rendering) unless the env overrides it. draw() paints the
  // current state (after reset(), the reset state) onto a canvas of render_info()'s size that
  // the caller has cleared to white; the default throws recur::Error naming the env.
  virtual RenderInfo render_info() const { return {}; }
  virtual void draw(render::Canvas& canvas) const;

  // The RNG of reset distributions; its state is saved by checkpoints of env state.
  Rng& rng() { return rng_; }

  // Everything that determines the env's future: physical state, RNG and bookkeeping. A
  // training run saves these to resume exactly where it stopped.
  struct Snapshot {
    std::vector<double> state;
    Rng::State rng{};
    bool seeded = false, has_reset = false, needs_reset = false;
    int elapsed_steps = 0;
    double episode_return = 0;
  };
  Snapshot snapshot() const;
  // Returns true when the snapshot's episode could not be continued and a new one was started
  // instead: an env with state_size() 0 (a Box2D world: contacts, warm-start impulses and sleep
  // timers are not a flat vector) cannot rebuild a running episode, so restore() resets it from
  // the restored RNG (elapsed steps and return start again at 0). A recurrent caller must then
  // treat the next step as an episode start.
  bool restore(const Snapshot& snapshot);

 protected:
  struct Outcome {
    double reward = 0;
    bool terminated = false;
  };

  Env(Space observation_space, Space action_space);

  // Draws the initial state of an episode from `rng`. `seed` is what reset(seed) was given (rng
  // was just reseeded with it): adapters of envs that take a seed themselves (a Gymnasium env,
  // a simulator) hand it on; nullopt for reset() without a seed, and for the reset restore()
  // makes (the RNG continues). Every env overrides this one.
  virtual void reset_impl(Rng& rng, std::optional<uint64_t> seed);
  // The older form, without the seed: the default of the one above calls it, so an env written
  // against it still builds. New envs override the two-argument form; this default throws.
  virtual void reset_impl(Rng& rng);
  // Advances the state by one step with an action already checked against the action space.
  virtual Outcome step_impl(std::span<const float> action) = 0;
  // Writes the observation of the current state: obs.size() == obs_dim().
  virtual void observe(std::span<float> obs) const = 0;
  virtual void set_state_impl(std::span<const double> state);

  // Wrappers drive an inner env through these (protected members of another object are not
  // reachable from a derived class otherwise).
  static void forward_reset(Env& e, Rng& rng, std::optional<uint64_t> seed) {
    e.reset_impl(rng, seed);
  }
  static Outcome forward_step(Env& e, std::span<const float> a) { return e.step_impl(a); }
  static void forward_observe(const Env& e, std::span<float> obs) { e.observe(obs); }
  static void forward_set_state(Env& e, std::span<const double> s) { e.set_state_impl(s); }

 private:
  friend class Registry;
  friend class VectorEnv;  // validates a whole batch first, then advances without re-checking
  StepResult advance(std::span<const float> action);
  // reset()'s work after seeding: reset_impl with `seed`, observe, bookkeeping.
  std::span<const float> start_episode(std::optional<uint64_t> seed);

  std::string id_ = "unregistered env";
  Space observation_space_;
  Space action_space_;
  int max_episode_steps_ = 0;
  std::vector<float> obs_;
  Rng rng_;
  bool seeded_ = false;
  bool has_reset_ = false;
  bool needs_reset_ = false;
  int elapsed_steps_ = 0;
  double episode_return_ = 0;
};

}  // namespace recur::envs
