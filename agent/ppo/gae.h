// Generalized advantage estimation over a (T, N) rollout, respecting termination vs truncation:
//   terminated at t:  the episode really ended, the next value is 0 (no bootstrap);
//   truncated at t:   the time limit cut it, the next value is V(final observation), the value
//                     the actor computed for the ended episode's last observation;
//   otherwise:        the next value is V of step t+1 (or last_values after the last step).
// Either end stops the lambda-chain: step t+1 belongs to another episode.
//   delta_t = r_t + gamma * next_value_t - V_t;  A_t = delta_t + gamma * lambda * [t continues] *
//   A_{t+1} returns_t = A_t + V_t
// Reset steps (transition[t] = 0, Gymnasium's NEXT_STEP autoreset: the env ignored the action
// while it reset) are no transitions: A_t = 0, returns_t = V_t, and nothing chains through them
// (they always follow an episode's end, which stops the chain anyway).
#pragma once

#include <cstdint>
#include <span>

namespace recur::agent {

// All (T, N) time-major except last_values (N). Writes advantages and returns (T, N).
// transition may be empty (every step is a transition).
void compute_gae(int T, int N, float gamma, float lambda, std::span<const float> rewards,
                 std::span<const float> values, std::span<const uint8_t> terminated,
                 std::span<const uint8_t> truncated, std::span<const float> bootstrap_values,
                 std::span<const float> last_values, std::span<float> advantages,
                 std::span<float> returns, std::span<const uint8_t> transition = {});

}  // namespace recur::agent
