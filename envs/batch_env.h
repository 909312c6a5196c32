// BatchEnv: what the actor loop, the trainer and the evaluator step: N envs in lockstep behind
// batched float32 buffers. VectorEnv (vector_env.h, recur's own envs) implements it; a program
// can bring its own batch (the Python package adapts a Gymnasium VectorEnv in tools/python/).
//
//   env.reset(seed);              // episode_start() is 1 everywhere
//   env.step(actions);            // actions (N, action_dim), row-major
//   env.obs(); env.rewards(); ... // (N, obs_dim), (N,), ...
//
// The contract is Gymnasium's SAME_STEP autoreset: on the step that ends env i's episode, row i
// of obs() is the next episode's first observation, final_obs() row i the ended one's last,
// final_return()/final_length() its return and length, and episode_start()[i] is 1 (the next
// step is the first of an episode: a recurrent policy resets slot i).
//
// Reset steps (Gymnasium's NEXT_STEP autoreset). A batch may spend a step of env i on its reset:
// the action is ignored, the reward is 0, and the step is no transition. transition() is then 0
// for i, and episode_start()[i] is 1 after that step (its obs row is the new episode's first);
// terminated/truncated and the ended episode's final_* rows belong to the step before. The
// learner masks such steps out of GAE and the losses. transition() is empty when every step is a
// transition (VectorEnv), so the common case costs nothing.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "envs/env.h"
#include "envs/space.h"

namespace recur::envs {

class BatchEnv {
 public:
  virtual ~BatchEnv() = default;

  virtual int num_envs() const = 0;
  virtual const Space& single_observation_space() const = 0;
  virtual const Space& single_action_space() const = 0;
  // What the batch runs, for messages and run metadata.
  virtual const std::string& id() const = 0;
  int obs_dim() const { return single_observation_space().flat_size(); }
  int action_dim() const { return single_action_space().flat_size(); }

  // Env i gets a seed derived from (seed, i) (VectorEnv: derive_seed(seed, i)).
  virtual void reset(uint64_t seed) = 0;
  // actions: (num_envs, action_dim). Throws std::invalid_argument on a wrong size or an action
  // outside the space; std::logic_error before reset().
  virtual void step(std::span<const float> actions) = 0;

  virtual std::span<const float> obs() const = 0;              // (N, obs_dim)
  virtual std::span<const float> rewards() const = 0;          // (N,)
  virtual std::span<const uint8_t> terminated() const = 0;     // (N,) 0/1
  virtual std::span<const uint8_t> truncated() const = 0;      // (N,) 0/1
  virtual std::span<const uint8_t> episode_start() const = 0;  // (N,) 0/1
  // Rows valid where terminated or truncated on the last step.
  virtual std::span<const float> final_obs() const = 0;  // (N, obs_dim)
  // Rows valid where episode_start() is 1 after a step (an episode ended there or, with reset
  // steps, on the step before).
  virtual std::span<const double> final_return() const = 0;  // (N,)
  virtual std::span<const int> final_length() const = 0;     // (N,) transitions, no reset step
  // (N,) 0 where the last step was a reset step; empty: every step is a transition.
  virtual std::span<const uint8_t> transition() const { return {}; }

  // Every env's snapshot plus the batch flags: restore() continues exactly from there.
  struct Snapshot {
    std::vector<Env::Snapshot> envs;
    std::vector<uint8_t> episode_start;
  };
  // Whether snapshot()/restore() work; a batch that cannot (envs outside recur) restarts its
  // episodes when a run resumes.
  virtual bool can_snapshot() const { return false; }
  virtual Snapshot snapshot() const {
    throw std::logic_error("BatchEnv(" + id() + "): this batch cannot be snapshotted");
  }
  // Returns the number of envs that restarted their episode; episode_start() is 1 for those.
  virtual int restore(const Snapshot& /*snapshot*/) {
    throw std::logic_error("BatchEnv(" + id() + "): this batch cannot be restored");
  }
};

}  // namespace recur::envs
