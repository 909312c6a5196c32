#include "agent/ppo/gae.h"

#include <vector>

#include "core/error.h"

namespace recur::agent {
namespace {

// From this many envs on, compute_gae walks rows (tools/bench/gae_walks.cc: even at 8 envs).
constexpr int kRowWalkEnvs = 8;

}  // namespace

void compute_gae(int T, int N, float gamma, float lambda, std::span<const float> rewards,
                 std::span<const float> values, std::span<const uint8_t> terminated,
                 std::span<const uint8_t> truncated, std::span<const float> bootstrap_values,
                 std::span<const float> last_values, std::span<float> advantages,
                 std::span<float> returns, std::span<const uint8_t> transition) {
  const auto tn = static_cast<size_t>(T) * N;
  RECUR_CHECK_ARG(rewards.size() == tn && values.size() == tn && terminated.size() == tn &&
                      truncated.size() == tn && bootstrap_values.size() == tn &&
                      last_values.size() == static_cast<size_t>(N) && advantages.size() == tn &&
                      returns.size() == tn && (transition.empty() || transition.size() == tn),
                  "compute_gae: buffers must be (T, N) = ({}, {})", T, N);
  // One element's step of the chain; both walks below run it, so they give the same bits.
  auto element = [&](int t, int n, double& next_adv) {
    const size_t i = static_cast<size_t>(t) * N + n;
    if (!transition.empty() && !transition[i]) {
      next_adv = 0;
      advantages[i] = 0;
      returns[i] = values[i];
      return;
    }
    const bool term = terminated[i] != 0, trunc = truncated[i] != 0;
    double next_value;
    if (term) {
      next_value = 0;
    } else if (trunc) {
      next_value = bootstrap_values[i];
    } else {
      next_value = t == T - 1 ? last_values[n] : values[i + N];
    }
    const double delta = rewards[i] + double{gamma} * next_value - values[i];
    const double carry = term || trunc ? 0.0 : double{gamma} * lambda * next_adv;
    next_adv = delta + carry;
    advantages[i] = static_cast<float>(next_adv);
    returns[i] = static_cast<float>(next_adv + values[i]);
  };
  // Many envs: row by row backward over t, the envs' chains side by side (one carried advantage
  // each), so that loads are contiguous and the independent chains overlap; a column walk waits
  // on each step's chain (7-11x slower at T 32 x N 1024-4096 on the dev machine's EPYC,
  // tools/bench/gae_walks.cc). A few envs: the column walk, its chain in a register (the row
  // walk's chain through memory costs 2x for one env).
  if (N >= kRowWalkEnvs) {
    std::vector<double> carried(static_cast<size_t>(N), 0.0);  // once per update
    for (int t = T - 1; t >= 0; --t)
      for (int n = 0; n < N; ++n) element(t, n, carried[static_cast<size_t>(n)]);
  } else {
    for (int n = 0; n < N; ++n) {
      double next_adv = 0;
      for (int t = T - 1; t >= 0; --t) element(t, n, next_adv);
    }
  }
}

}  // namespace recur::agent
