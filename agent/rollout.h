// One unroll of T steps of N envs, time-major (T, N, ...), with everything the learner needs to
// replay it exactly: the recurrent state of every env at the unroll's first step, the
// episode-start flag fed to the policy at every step, and, for truncated episodes, the value of
// the final observation (computed by the actor with that env's recurrent state).
#pragma once

#include <cstdint>
#include <vector>
#include "policy/aligned.h"

namespace recur::agent {

struct Rollout {
  int T = 0, N = 0, obs_dim = 0, action_dim = 0, state_size = 0;
  policy::AlignedVector<float> obs;        // (T, N, obs_dim) normalized, as the policy saw them
  policy::AlignedVector<float> actions;    // (T, N, action_dim)
  policy::AlignedVector<float> log_probs;  // (T, N)
  policy::AlignedVector<float> values;     // (T, N)
  policy::AlignedVector<float> rewards;    // (T, N) (normalized when reward normalization is on)
  std::vector<uint8_t> terminated;         // (T, N)
  std::vector<uint8_t> truncated;          // (T, N)
  std::vector<uint8_t> episode_start;      // (T, N) 1 = state zeroed before step t
  std::vector<uint8_t> transition;         // (T, N) 0 = a reset step (see above)
  bool has_reset_steps = false;            // some transition[t, n] is 0
  policy::AlignedVector<float> bootstrap_values;  // (T, N) V(final obs) where truncated, else 0
  policy::AlignedVector<float> initial_state;     // (N, state_size) at step 0
  policy::AlignedVector<float> last_values;       // (N) V of the observation after step T-1
  policy::AlignedVector<float> advantages;        // (T, N) filled by GAE
  policy::AlignedVector<float> returns;           // (T, N)
  // algo.bptt_steps: with state_every > 0 the actor loop also stores the state of every env at
  // steps 0, state_every, 2 state_every, ... (taken as initial_state is: before the step's
  // episode-start zeroing), the starts of the sequences the learner trains on (agent/ppo/bptt.h).
  int state_every = 0;
  policy::AlignedVector<float> chunk_states;  // (T / state_every, N, state_size)

  void resize(int t, int n, int obs_width, int act, int state) {
    T = t, N = n, obs_dim = obs_width, action_dim = act, state_size = state;
    const auto tn = static_cast<size_t>(t) * n;
    obs.assign(tn * obs_width, 0.0f);
    actions.assign(tn * act, 0.0f);
    for (auto* v : {&log_probs, &values, &rewards, &bootstrap_values, &advantages, &returns})
      v->assign(tn, 0.0f);
    for (auto* v : {&terminated, &truncated, &episode_start}) v->assign(tn, 0);
    transition.assign(tn, 1);
    has_reset_steps = false;
    initial_state.assign(static_cast<size_t>(n) * state, 0.0f);
    chunk_states.assign(state_every > 0 ? static_cast<size_t>(t / state_every) * n * state : 0,
                        0.0f);
    last_values.assign(static_cast<size_t>(n), 0.0f);
  }
  // Keeps the first t steps (DD-PPO's preemption ends a rollout early). Capacity stays, so the
  // next resize() to the full length allocates nothing.
  void truncate(int t) {
    const auto tn = static_cast<size_t>(t) * N;
    obs.resize(tn * obs_dim);
    actions.resize(tn * action_dim);
    for (auto* v : {&log_probs, &values, &rewards, &bootstrap_values, &advantages, &returns})
      v->resize(tn);
    for (auto* v : {&terminated, &truncated, &episode_start, &transition}) v->resize(tn);
    T = t;
  }
};

}  // namespace recur::agent
