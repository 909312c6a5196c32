#include "agent/ppo/gae.h"

#include <vector>

#include "core/error.h"

namespace recur::agent {

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
  // Row by row backward over t, the N chains side by side (one carried advantage per env): each
  // element's operations are the column-wise definition's (kernels/gae_math.h walks a column),
  // in the same order, so the results are the same to the bit; rows keep the loads contiguous
  // and the envs' independent chains overlap, where a column walk waits on each step's chain
  // (~15 ns an element at T 32, N 1024 on the dev machine's EPYC; see docs/PERFORMANCE.md).
  std::vector<double> carried(static_cast<size_t>(N), 0.0);  // once per update, 8 bytes an env
  for (int t = T - 1; t >= 0; --t) {
    const size_t row = static_cast<size_t>(t) * N;
    for (int n = 0; n < N; ++n) {
      const size_t i = row + n;
      double& next_adv = carried[static_cast<size_t>(n)];
      if (!transition.empty() && !transition[i]) {
        next_adv = 0;
        advantages[i] = 0;
        returns[i] = values[i];
        continue;
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
    }
  }
}

}  // namespace recur::agent
