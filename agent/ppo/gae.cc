#include "agent/ppo/gae.h"

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
  for (int n = 0; n < N; ++n) {
    double next_adv = 0;
    for (int t = T - 1; t >= 0; --t) {
      const size_t i = static_cast<size_t>(t) * N + n;
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
