// The sequence replay buffer of the recurrent off-policy learners (SAC, TD3): it stores the
// transitions of N env streams and samples fixed-length windows of consecutive steps, with either
// the actor's recurrent state stored at chunk starts plus a burn-in (R2D2, Kapturowski et al.
// 2019) or a zero initial state (Ni et al. 2022, "Recurrent model-free RL can be a strong
// baseline").
//
// ## Storage
// Env n owns a ring of R = capacity / num_envs rows. Its stream position p counts the transitions
// env n has stored (reset steps excluded); position p lives in row p % R, so the ring holds
// positions [max(0, added_n - R), added_n - 1] (oldest .. newest). A row holds
//   obs (obs_dim) the action was taken on, action (action_dim), reward, terminated, truncated,
//   next_obs (obs_dim: the final observation when the episode ended on this step), and
//   first: the row is an episode's first step, i.e. add() was told episode_start = 1 OR the env's
//   previous stored row ended (terminated or truncated). The second half makes a missed flag
//   harmless; a row flagged first without its predecessor having ended (an env reset from outside)
//   still separates the two episodes.
// Recurrent state (state_size > 0) is kept only for stored-state rows, p % state_stride == 0, in
// S = ceil(R / state_stride) slots per env (slot (p / state_stride) % S, never overwritten while
// row p is in the ring). A stored-state row that is an episode's first step stores zeros: the
// state add() receives there is the previous episode's, before the reset.
// Memory: ReplaySpec::bytes(); next_obs doubles the observation memory and buys windows that
// need no neighbour to find their bootstrap observation.
//
// ## Sampling a window (B per call, each independently)
// Anchor: a transition drawn uniformly among all stored ones (env n, position a).
// Start s, with lo = the ring's oldest position of env n and e = the position of the anchor's
// episode's first step (treated as -infinity once overwritten):
//   zero-state (state_size == 0): s = max(e, a - burn_in, lo).
//   stored-state: q = the largest multiple of state_stride <= a - burn_in;
//     s = e            if e >= max(q, lo)   (start at the episode start: zero state),
//     s = q            else if q >= lo      (start at a stored state, burn-in of >= burn_in rows),
//     s = the smallest multiple of state_stride >= lo, when the episode's start and every stored
//                      state <= a - burn_in were overwritten (a window that starts mid-episode
//                      at the oldest surviving stored-state row: its burn-in is shorter than
//                      burn_in rows and the anchor may sit in it). If that row is after a (at most
//                      state_stride - 1 anchors per env, right after the ring's oldest row), the
//                      anchor is redrawn. A window never starts at a row whose state is unknown.
//   With state_stride <= seq_len (validated) the anchor always lies in the rows k >= burn_in of
//   a window that starts at q, so every stored transition can carry a loss.
// End: the window takes rows s, s+1, ... and stops after L = burn_in + seq_len rows, after a row
// whose terminated or truncated is 1 (the episode's last step), before a row that is an episode's
// first step, or at the ring's newest row. length = rows taken (1..L). Windows never cross an
// episode boundary.
//
// ## The batch (time-major, k = 0..L-1 the window's rows, b = 0..B-1 the window)
//   obs[k] = row s+k's obs for k < length; obs[length] = next_obs of row s+length-1 (the final
//     observation when the episode ended there, else the next observation): the bootstrap input.
//   terminated[k] = 1 where the episode terminated at row k (kills the bootstrap). A truncated
//     end only ends the window: the learner bootstraps from obs[length].
//   valid[k] = 1 for k < length. loss_mask[k] = valid[k] and (k >= burn_in or s is an episode's
//     first step: a window from an episode start needs no burn-in).
//   episode_start[0] = 1 when s is an episode's first step, and always in zero-state mode; every
//     other entry is 0 (windows hold one episode). The learner resets its state where it is 1.
//   initial_state = the stored state of row s; zeros when s is an episode's first step.
//   Everything at k >= length (obs at k > length) is zero.
//
// ## Use
// add() and sample() allocate nothing (every array is sized by the constructor and
// reserve_batch). Not thread-safe: the learner adds and samples from one thread or serializes.
// Sampling depends only on the stored data and the Rng, so equal streams and seeds give equal
// batches.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/rng.h"
#include "policy/aligned.h"
#include "policy/tensor.h"

namespace recur::agent::offpolicy {

struct ReplaySpec {
  int num_envs = 1;
  int obs_dim = 1;
  int action_dim = 1;  // floats per stored action (Box: d; Discrete: 1, the index)
  int state_size = 0;  // floats of recurrent state stored at chunk starts; 0 = zero-state sampling
  int64_t capacity = 0;  // transitions in total; each env gets capacity / num_envs rows (a ring)
  int seq_len = 1;       // T: steps that carry a loss
  int burn_in = 0;       // steps replayed before them without a loss
  int state_stride = 1;  // rows between stored states in an env's stream (1..seq_len; unused when
                         // state_size == 0)
  int window() const { return burn_in + seq_len; }              // L
  int64_t rows_per_env() const { return capacity / num_envs; }  // R
  int64_t state_slots() const;  // S = ceil(R / state_stride), 0 in zero-state mode
  // recur::Error naming the field: every size positive (state_size, burn_in >= 0),
  // capacity / num_envs >= window (a ring holds a whole window), state_stride <= seq_len.
  void validate() const;
  size_t bytes() const;  // memory the buffer holds (for the docs and the log line)
};

struct ReplayBatch {  // time-major; sized by SequenceReplay::reserve_batch, reused
  int L = 0, B = 0;
  policy::AlignedVector<float> obs;            // (L+1, B, obs_dim)
  policy::AlignedVector<float> actions;        // (L, B, action_dim)
  policy::AlignedVector<float> rewards;        // (L, B)
  policy::AlignedVector<float> terminated;     // (L, B) 1 where the episode terminated at row k
  policy::AlignedVector<float> valid;          // (L, B) 1 where row k holds a stored transition
  policy::AlignedVector<float> loss_mask;      // (L, B) valid and (k >= burn_in or episode start)
  std::vector<uint8_t> episode_start;          // (L+1, B) see the header comment
  policy::AlignedVector<float> initial_state;  // (B, state_size)
  std::vector<int> length;                     // (B) valid rows in the window (1..L)
};

class SequenceReplay {
 public:
  explicit SequenceReplay(const ReplaySpec& spec);  // validates; allocates everything once
  const ReplaySpec& spec() const { return spec_; }

  // One step of all N envs:
  //  obs (N, obs_dim): the observation the action was taken on; actions (N, action_dim);
  //  rewards (N); terminated (N) 0/1; truncated (N) 0/1;
  //  next_obs (N, obs_dim): the observation after the step, the FINAL observation of an episode
  //    that ended on this step (terminated or truncated), otherwise the next one;
  //  episode_start (N) 0/1: 1 where obs is the first observation of an episode;
  //  states (N, state_size): the recurrent state the actor held BEFORE this step (before the
  //    episode-start reset is applied), read only where the row is a stored-state row; empty when
  //    state_size == 0;
  //  transition (N) 0/1 or empty (= all 1): rows with 0 are reset steps (an autoreset step whose
  //    action the env ignored), not transitions: not stored, no stream position.
  // std::invalid_argument on a span of the wrong size.
  void add(std::span<const float> obs, std::span<const float> actions,
           std::span<const float> rewards, std::span<const uint8_t> terminated,
           std::span<const uint8_t> truncated, std::span<const float> next_obs,
           std::span<const uint8_t> episode_start, std::span<const float> states,
           std::span<const uint8_t> transition = {});

  int64_t size() const { return stored_prefix_.back(); }  // transitions stored now (<= N * R)
  int64_t added() const { return added_; }                // transitions ever added

  void reserve_batch(int B, ReplayBatch& batch) const;  // sizes batch for B windows
  // Samples B windows into batch, which reserve_batch(B) sized; no allocation.
  // std::invalid_argument when the buffer is empty or batch was sized for another B or spec.
  void sample(int B, Rng& rng, ReplayBatch& batch) const;

  // Checkpointing: tensors <prefix>{obs, next_obs, actions, rewards, terminated, truncated,
  // episode_start, states}, each (N, R, ...) (states (N, S, state_size)), flags as 0/1 floats;
  // meta (an object this call fills; the caller nests it where it likes) holds the format, the
  // shapes and the per-env counters. The whole ring is copied (about bytes(), the flags as floats:
  // a checkpoint of a large buffer is large). restore checks every shape against this buffer's spec
  // and throws recur::Error naming what differs and what to do, changing nothing then.
  void save(policy::TensorMap& out, nlohmann::json& meta, const std::string& prefix) const;
  void restore(const policy::TensorMap& in, const nlohmann::json& meta, const std::string& prefix);

 private:
  size_t row(int n, int64_t p) const { return static_cast<size_t>(n * rows_ + p % rows_); }
  size_t slot(int n, int64_t p) const {
    return static_cast<size_t>(n * slots_ + (p / spec_.state_stride) % slots_);
  }
  int64_t oldest(int n) const { return env_added_[n] > rows_ ? env_added_[n] - rows_ : 0; }
  // The start position of the window anchored at position a of env n; -1 when the anchor has no
  // start (redrawn; see the header comment).
  int64_t window_start(int n, int64_t a) const;
  // Copies the window of env n starting at position s into column b of batch.
  void fill_window(int n, int64_t s, int b, ReplayBatch& batch) const;
  void update_prefix();

  ReplaySpec spec_;
  int64_t rows_ = 0;                       // R
  int64_t slots_ = 0;                      // S
  policy::AlignedVector<float> obs_;       // (N, R, obs_dim)
  policy::AlignedVector<float> next_obs_;  // (N, R, obs_dim)
  policy::AlignedVector<float> actions_;   // (N, R, action_dim)
  policy::AlignedVector<float> rewards_;   // (N, R)
  std::vector<uint8_t> terminated_;        // (N, R)
  std::vector<uint8_t> truncated_;         // (N, R)
  std::vector<uint8_t> first_;             // (N, R) the row is an episode's first step
  policy::AlignedVector<float> states_;    // (N, S, state_size)
  std::vector<int64_t> env_added_;         // (N) transitions env n has stored ever
  std::vector<uint8_t> env_ended_;         // (N) env n's newest row ended its episode
  std::vector<int64_t> stored_prefix_;     // (N+1) prefix sums of min(env_added_, R)
  int64_t added_ = 0;
};

}  // namespace recur::agent::offpolicy
