#include "policy/sequence_plan.h"

#include <algorithm>

#include "core/error.h"

namespace recur::policy {

SequencePlan plan_sequences(int T, int B, std::span<const uint8_t> episode_start) {
  SequencePlan plan;
  plan_sequences_into(plan, T, B, episode_start);
  return plan;
}

void plan_sequences_into(SequencePlan& plan, int T, int B, std::span<const uint8_t> episode_start) {
  RECUR_CHECK_ARG(T >= 1 && B >= 1, "plan_sequences: T {} and B {} must be >= 1", T, B);
  const size_t tb = static_cast<size_t>(T) * static_cast<size_t>(B);
  RECUR_CHECK_ARG(episode_start.size() == tb,
                  "plan_sequences: episode_start has {} flags, expected T {} x B {}",
                  episode_start.size(), T, B);
  for (size_t i = 0; i < tb; ++i)
    RECUR_CHECK_ARG(episode_start[i] <= 1,
                    "plan_sequences: episode_start[{}][{}] = {}, flags must be 0 or 1",
                    i / static_cast<size_t>(B), i % static_cast<size_t>(B), episode_start[i]);

  plan.T = T;
  plan.B = B;
  plan.subs.clear();
  plan.final_sub.assign(static_cast<size_t>(B), -1);
  // Sub-sequences, env-major: a new one at t = 0 and before every later episode start.
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < T; ++t) {
      const bool start = episode_start[static_cast<size_t>(t) * B + b] != 0;
      if (t == 0 || start) plan.subs.push_back({b, t, 0, start});
      ++plan.subs.back().length;
    }
    plan.final_sub[static_cast<size_t>(b)] = static_cast<int32_t>(plan.subs.size() - 1);
  }
  const int N = static_cast<int>(plan.subs.size());
  plan.count = N;
  plan.max_length = 0;
  plan.lengths.resize(static_cast<size_t>(N));
  plan.initial_row.resize(static_cast<size_t>(N));
  for (int n = 0; n < N; ++n) {
    const SubSequence& s = plan.subs[static_cast<size_t>(n)];
    plan.max_length = std::max(plan.max_length, s.length);
    plan.lengths[static_cast<size_t>(n)] = s.length;
    plan.initial_row[static_cast<size_t>(n)] = s.t0 == 0 && !s.starts_episode ? s.env : -1;
  }
  // The two row maps, inverse of each other on the non-padding rows.
  plan.padded_row.resize(tb);
  plan.source_row.assign(static_cast<size_t>(plan.max_length) * static_cast<size_t>(N), -1);
  for (int n = 0; n < N; ++n) {
    const SubSequence& s = plan.subs[static_cast<size_t>(n)];
    for (int i = 0; i < s.length; ++i) {
      const int32_t original = (s.t0 + i) * B + s.env;
      const int32_t padded = i * N + n;
      plan.padded_row[static_cast<size_t>(original)] = padded;
      plan.source_row[static_cast<size_t>(padded)] = original;
    }
  }
}

}  // namespace recur::policy
