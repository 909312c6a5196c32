// Cutting a (T, B) batch with episode starts into sub-sequences that never cross a reset, for a
// sequence engine that cannot reset state mid-sequence (cuDNN: one initial state per sequence,
// consumed at its first step; docs/RNN_LAYOUT.md, "Episode resets inside a sequence").
//
// Env b's T steps are cut before every step t > 0 with episode_start[t][b] = 1. Sub-sequence n
// covers steps t0 .. t0 + length - 1 of env b and starts from
//   * env b's stored initial state  when t0 = 0 and episode_start[0][b] = 0 (initial_row[n] = b),
//   * zeros                         otherwise (an episode starts at t0; initial_row[n] = -1).
// Cutting there is exact: a reset sends neither values nor gradients across, so nothing is lost.
//
// Sub-sequences are numbered env-major (all of env 0 in time order, then env 1, ...) and laid
// out padded, time-major (cuDNN's SEQ_MAJOR_UNPACKED), max_length steps of N = count rows:
//
//   original row  t * B + b            (T, B)
//   padded row    (t - t0) * N + n     (max_length, N); steps past a sub-sequence's length are
//                                      padding (source_row = -1: zero inputs, ignored outputs)
//
// Env b's final state is the state after the last step of its last sub-sequence, final_sub[b].
// Plain host code (no CUDA): CPU-only builds test it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace recur::policy {

struct SubSequence {
  int env = 0;                  // b
  int t0 = 0;                   // first step
  int length = 0;               // >= 1
  bool starts_episode = false;  // t0 > 0, or t0 == 0 and episode_start[0][b] = 1: zero state
};

struct SequencePlan {
  int T = 0, B = 0;
  int count = 0;                     // N sub-sequences, B <= N <= T * B
  int max_length = 0;                // longest sub-sequence (1..T)
  std::vector<SubSequence> subs;     // (N)
  std::vector<int32_t> lengths;      // (N) subs[n].length: cuDNN's seqLengthArray
  std::vector<int32_t> padded_row;   // (T * B) padded row of original row t * B + b
  std::vector<int32_t> source_row;   // (max_length * N) original row of a padded row, -1 = pad
  std::vector<int32_t> initial_row;  // (N) env whose stored initial state starts n, -1 = zeros
  std::vector<int32_t> final_sub;    // (B) the last sub-sequence of env b

  // True when no sub-sequence is cut short: N = B and every length is T (resets at t = 0 only).
  bool equal_lengths() const { return count == B && max_length == T; }
};

// episode_start (T, B) of 0/1 flags (anything else throws std::invalid_argument).
SequencePlan plan_sequences(int T, int B, std::span<const uint8_t> episode_start);
// The same into an existing plan, reusing its vectors' capacity (no allocation when a plan of
// at least this size was made before).
void plan_sequences_into(SequencePlan& plan, int T, int B, std::span<const uint8_t> episode_start);

}  // namespace recur::policy
