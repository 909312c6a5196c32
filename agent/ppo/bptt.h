// algo.bptt_steps: training sequences shorter than the rollout. A rollout of T steps of N envs is
// cut into K = T / b pieces per env, and the learner sees them as N * K columns of b steps, each
// starting from the recurrent state the actor held at its first step (Rollout::chunk_states,
// stored by the actor loop). GAE runs over the whole rollout first, so a cut does not shorten
// the returns' horizon, only the span gradients flow back through (truncated BPTT, as PufferLib's
// bptt_horizon and SB3-contrib's RecurrentPPO minibatch sequences).
#pragma once

#include "agent/rollout.h"

namespace recur::agent {

// out = r cut into sequences of b steps: out.T = b, out.N = N * K, column j * N + n holding
// steps [j b, (j + 1) b) of env n, its initial state r.chunk_states[j][n]. Copies what the
// learner reads after GAE (obs, actions, log_probs, values, advantages, returns, episode_start,
// transition); out's other arrays are left empty. out keeps its capacity between calls.
void cut_into_sequences(const Rollout& r, int b, Rollout& out);

}  // namespace recur::agent
