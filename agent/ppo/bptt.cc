#include "agent/ppo/bptt.h"

#include <algorithm>

#include "core/error.h"

namespace recur::agent {
namespace {

// (T, N, width) -> (b, N * K, width): row (j b + t', n) goes to (t', j N + n).
template <typename V>
void cut(const V& in, int T, int N, int b, size_t width, V& out) {
  out.resize(in.size());
  const int K = T / b;
  for (int j = 0; j < K; ++j)
    for (int t = 0; t < b; ++t) {
      const auto src = (static_cast<size_t>(j) * b + t) * N * width;
      const auto dst = (static_cast<size_t>(t) * N * K + static_cast<size_t>(j) * N) * width;
      std::copy_n(in.begin() + static_cast<ptrdiff_t>(src), static_cast<size_t>(N) * width,
                  out.begin() + static_cast<ptrdiff_t>(dst));
    }
}

}  // namespace

void cut_into_sequences(const Rollout& r, int b, Rollout& out) {
  RECUR_ASSERT(b >= 1 && r.T % b == 0);
  const int K = r.T / b;
  const auto ns = static_cast<size_t>(r.N) * static_cast<size_t>(r.state_size);
  RECUR_CHECK(r.state_every == b && r.chunk_states.size() == static_cast<size_t>(K) * ns,
              "algo.bptt_steps = {}: the rollout stored the actor's states every {} steps ({} "
              "floats for {} sequences of {} envs); this is a bug in recur",
              b, r.state_every, r.chunk_states.size(), K, r.N);
  out.T = b, out.N = r.N * K;
  out.obs_dim = r.obs_dim, out.action_dim = r.action_dim, out.state_size = r.state_size;
  cut(r.obs, r.T, r.N, b, static_cast<size_t>(r.obs_dim), out.obs);
  cut(r.actions, r.T, r.N, b, static_cast<size_t>(r.action_dim), out.actions);
  cut(r.log_probs, r.T, r.N, b, 1, out.log_probs);
  cut(r.values, r.T, r.N, b, 1, out.values);
  cut(r.advantages, r.T, r.N, b, 1, out.advantages);
  cut(r.returns, r.T, r.N, b, 1, out.returns);
  cut(r.episode_start, r.T, r.N, b, 1, out.episode_start);
  cut(r.transition, r.T, r.N, b, 1, out.transition);
  out.has_reset_steps = r.has_reset_steps;
  // Sequence j * N + n starts from chunk j's state of env n: the chunk table's own order.
  out.initial_state.assign(r.chunk_states.begin(), r.chunk_states.end());
}

}  // namespace recur::agent
