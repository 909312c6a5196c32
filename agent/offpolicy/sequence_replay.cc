#include "agent/offpolicy/sequence_replay.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "agent/run/json_read.h"
#include "core/error.h"

namespace recur::agent::offpolicy {

namespace {

constexpr const char* kFormat = "recur.sequence_replay/1";
// What every restore error ends with: the two ways forward.
constexpr const char* kResumeHint =
    "resume with the same settings, or resume without the saved replay buffer (it then refills "
    "from scratch)";

size_t sz(int64_t v) {
  return static_cast<size_t>(v);
}

template <typename T>
void copy_n(const T* from, size_t n, T* to) {
  if (n > 0) std::memcpy(to, from, n * sizeof(T));
}

}  // namespace

int64_t ReplaySpec::state_slots() const {
  if (state_size == 0) return 0;
  return (rows_per_env() + state_stride - 1) / state_stride;
}

void ReplaySpec::validate() const {
  RECUR_CHECK(num_envs >= 1, "replay num_envs is {}; it must be at least 1", num_envs);
  RECUR_CHECK(obs_dim >= 1, "replay obs_dim is {}; it must be at least 1", obs_dim);
  RECUR_CHECK(action_dim >= 1, "replay action_dim is {}; it must be at least 1", action_dim);
  RECUR_CHECK(state_size >= 0,
              "replay state_size is {}; it must be 0 (zero-state sampling) or "
              "the recurrent state's float count",
              state_size);
  RECUR_CHECK(seq_len >= 1, "replay seq_len is {}; it must be at least 1", seq_len);
  RECUR_CHECK(burn_in >= 0, "replay burn_in is {}; it must be 0 or more", burn_in);
  RECUR_CHECK(state_stride >= 1, "replay state_stride is {}; it must be at least 1", state_stride);
  RECUR_CHECK(capacity / num_envs >= window(),
              "replay capacity {} gives {} rows per env ({} envs), fewer than one window of "
              "burn_in + seq_len = {} + {} = {} steps: raise capacity to at least {} or shorten "
              "the window",
              capacity, capacity / num_envs, num_envs, burn_in, seq_len, window(),
              int64_t{window()} * num_envs);
  // A stride longer than seq_len would leave rows that no window's loss part reaches.
  RECUR_CHECK(state_size == 0 || state_stride <= seq_len,
              "replay state_stride {} is longer than seq_len {}: the rows between a stored state's "
              "loss part and the next stored state would never carry a loss; use a state_stride "
              "of 1..{}",
              state_stride, seq_len, seq_len);
}

size_t ReplaySpec::bytes() const {
  const size_t n = sz(num_envs), r = sz(rows_per_env());
  const size_t row_floats = 2 * sz(obs_dim) + sz(action_dim) + 1;  // obs, next_obs, action, reward
  return n * r * (row_floats * sizeof(float) + 3)                  // + terminated, truncated, first
         + n * sz(state_slots()) * sz(state_size) * sizeof(float) + n * (sizeof(int64_t) + 1) +
         (n + 1) * sizeof(int64_t);
}

SequenceReplay::SequenceReplay(const ReplaySpec& spec) : spec_(spec) {
  spec_.validate();
  rows_ = spec_.rows_per_env();
  slots_ = spec_.state_slots();
  const size_t nr = sz(spec_.num_envs * rows_);
  obs_.assign(nr * sz(spec_.obs_dim), 0.0f);
  next_obs_.assign(nr * sz(spec_.obs_dim), 0.0f);
  actions_.assign(nr * sz(spec_.action_dim), 0.0f);
  rewards_.assign(nr, 0.0f);
  terminated_.assign(nr, 0);
  truncated_.assign(nr, 0);
  first_.assign(nr, 0);
  states_.assign(sz(spec_.num_envs * slots_) * sz(spec_.state_size), 0.0f);
  env_added_.assign(sz(spec_.num_envs), 0);
  env_ended_.assign(sz(spec_.num_envs), 0);
  stored_prefix_.assign(sz(spec_.num_envs) + 1, 0);
}

void SequenceReplay::add(std::span<const float> obs, std::span<const float> actions,
                         std::span<const float> rewards, std::span<const uint8_t> terminated,
                         std::span<const uint8_t> truncated, std::span<const float> next_obs,
                         std::span<const uint8_t> episode_start, std::span<const float> states,
                         std::span<const uint8_t> transition) {
  const size_t N = sz(spec_.num_envs), od = sz(spec_.obs_dim), ad = sz(spec_.action_dim),
               ss = sz(spec_.state_size);
  RECUR_CHECK_ARG(obs.size() == N * od && next_obs.size() == N * od,
                  "SequenceReplay::add: obs and next_obs hold {} and {} floats, expected "
                  "num_envs * obs_dim = {}",
                  obs.size(), next_obs.size(), N * od);
  RECUR_CHECK_ARG(
      actions.size() == N * ad,
      "SequenceReplay::add: actions hold {} floats, expected num_envs * action_dim = {}",
      actions.size(), N * ad);
  RECUR_CHECK_ARG(rewards.size() == N && terminated.size() == N && truncated.size() == N &&
                      episode_start.size() == N,
                  "SequenceReplay::add: rewards, terminated, truncated and episode_start hold {}, "
                  "{}, {}, {} values, expected num_envs = {} each",
                  rewards.size(), terminated.size(), truncated.size(), episode_start.size(), N);
  RECUR_CHECK_ARG(states.size() == N * ss,
                  "SequenceReplay::add: states hold {} floats, expected num_envs * state_size = {}",
                  states.size(), N * ss);
  RECUR_CHECK_ARG(transition.empty() || transition.size() == N,
                  "SequenceReplay::add: transition holds {} flags, expected none or num_envs = {}",
                  transition.size(), N);
  for (int n = 0; n < spec_.num_envs; ++n) {
    const size_t i = sz(n);
    if (!transition.empty() && !transition[i]) continue;  // a reset step: nothing happened
    const int64_t p = env_added_[i];
    const size_t r = row(n, p);
    copy_n(obs.data() + i * od, od, obs_.data() + r * od);
    copy_n(next_obs.data() + i * od, od, next_obs_.data() + r * od);
    copy_n(actions.data() + i * ad, ad, actions_.data() + r * ad);
    rewards_[r] = rewards[i];
    terminated_[r] = terminated[i] != 0;
    truncated_[r] = truncated[i] != 0;
    const bool first = episode_start[i] != 0 || env_ended_[i];
    first_[r] = first;
    if (ss > 0 && p % spec_.state_stride == 0) {
      float* dst = states_.data() + slot(n, p) * ss;
      // At an episode start the actor's state is the previous episode's: the true one is zero.
      if (first) {
        std::fill(dst, dst + ss, 0.0f);
      } else {
        copy_n(states.data() + i * ss, ss, dst);
      }
    }
    env_ended_[i] = terminated_[r] || truncated_[r];
    env_added_[i] = p + 1;
    ++added_;
  }
  update_prefix();
}

void SequenceReplay::update_prefix() {
  for (int n = 0; n < spec_.num_envs; ++n)
    stored_prefix_[sz(n) + 1] = stored_prefix_[sz(n)] + std::min(env_added_[sz(n)], rows_);
}

void SequenceReplay::reserve_batch(int B, ReplayBatch& batch) const {
  RECUR_CHECK_ARG(B >= 1, "SequenceReplay::reserve_batch: B is {}; it must be at least 1", B);
  const size_t L = sz(spec_.window()), b = sz(B);
  batch.L = spec_.window();
  batch.B = B;
  batch.obs.assign((L + 1) * b * sz(spec_.obs_dim), 0.0f);
  batch.actions.assign(L * b * sz(spec_.action_dim), 0.0f);
  batch.rewards.assign(L * b, 0.0f);
  batch.terminated.assign(L * b, 0.0f);
  batch.valid.assign(L * b, 0.0f);
  batch.loss_mask.assign(L * b, 0.0f);
  batch.episode_start.assign((L + 1) * b, 0);
  batch.initial_state.assign(b * sz(spec_.state_size), 0.0f);
  batch.length.assign(b, 0);
}

int64_t SequenceReplay::window_start(int n, int64_t a) const {
  const int64_t lo = oldest(n);
  const int64_t target = a - spec_.burn_in;
  if (spec_.state_size == 0) {
    // Zero-state: back burn_in rows, stopping at the episode's first step or the oldest row.
    const int64_t stop = std::max(lo, target);
    int64_t p = a;
    while (p > stop && !first_[row(n, p)]) --p;
    return p;
  }
  const int64_t stride = spec_.state_stride;
  const int64_t q = target >= 0 ? target - target % stride : -1;  // last stored state <= target
  // Walk back to q (at most burn_in + stride - 1 rows) looking for the episode's first step.
  int64_t p = a;
  const int64_t bound = std::max(lo, q);
  while (p > bound && !first_[row(n, p)]) --p;
  if (first_[row(n, p)]) return p;  // the episode starts at or after q: start there
  if (q >= lo) return q;            // p == q: a stored state mid-episode
  // The episode's start and every stored state <= target were overwritten: the oldest surviving
  // stored-state row, if it is not after the anchor.
  const int64_t f = (lo + stride - 1) / stride * stride;
  return f <= a ? f : -1;
}

void SequenceReplay::fill_window(int n, int64_t s, int b, ReplayBatch& batch) const {
  const size_t B = sz(batch.B), od = sz(spec_.obs_dim), ad = sz(spec_.action_dim),
               ss = sz(spec_.state_size), col = sz(b);
  const int64_t newest = env_added_[sz(n)] - 1;
  const bool from_start = first_[row(n, s)];
  int len = 0;
  for (int k = 0; k < spec_.window(); ++k) {
    const int64_t p = s + k;
    const size_t r = row(n, p), at = sz(k) * B + col;
    copy_n(obs_.data() + r * od, od, batch.obs.data() + at * od);
    copy_n(actions_.data() + r * ad, ad, batch.actions.data() + at * ad);
    batch.rewards[at] = rewards_[r];
    batch.terminated[at] = terminated_[r] ? 1.0f : 0.0f;
    batch.valid[at] = 1.0f;
    batch.loss_mask[at] = (k >= spec_.burn_in || from_start) ? 1.0f : 0.0f;
    len = k + 1;
    // The episode's last step, the newest row, or the next row opens another episode.
    if (terminated_[r] || truncated_[r] || p == newest || first_[row(n, p + 1)]) break;
  }
  // The bootstrap observation: the step's next_obs (the final one where the episode ended).
  const size_t last = row(n, s + len - 1), at = sz(len) * B + col;
  copy_n(next_obs_.data() + last * od, od, batch.obs.data() + at * od);
  batch.episode_start[col] = (from_start || ss == 0) ? 1 : 0;
  if (ss > 0 && !from_start)
    copy_n(states_.data() + slot(n, s) * ss, ss, batch.initial_state.data() + col * ss);
  batch.length[col] = len;
}

void SequenceReplay::sample(int B, Rng& rng, ReplayBatch& batch) const {
  const size_t L = sz(spec_.window()), b = sz(B);
  RECUR_CHECK_ARG(size() > 0, "SequenceReplay::sample: the buffer is empty; add transitions first");
  RECUR_CHECK_ARG(
      B >= 1 && batch.B == B && batch.L == spec_.window() &&
          batch.obs.size() == (L + 1) * b * sz(spec_.obs_dim) &&
          batch.actions.size() == L * b * sz(spec_.action_dim) && batch.rewards.size() == L * b &&
          batch.terminated.size() == L * b && batch.valid.size() == L * b &&
          batch.loss_mask.size() == L * b && batch.episode_start.size() == (L + 1) * b &&
          batch.initial_state.size() == b * sz(spec_.state_size) && batch.length.size() == b,
      "SequenceReplay::sample: batch was sized for B = {}, L = {}, not B = {}, L = {}: "
      "call reserve_batch({}, batch) first",
      batch.B, batch.L, B, spec_.window(), B);
  std::fill(batch.obs.begin(), batch.obs.end(), 0.0f);
  std::fill(batch.actions.begin(), batch.actions.end(), 0.0f);
  std::fill(batch.rewards.begin(), batch.rewards.end(), 0.0f);
  std::fill(batch.terminated.begin(), batch.terminated.end(), 0.0f);
  std::fill(batch.valid.begin(), batch.valid.end(), 0.0f);
  std::fill(batch.loss_mask.begin(), batch.loss_mask.end(), 0.0f);
  std::fill(batch.episode_start.begin(), batch.episode_start.end(), uint8_t{0});
  std::fill(batch.initial_state.begin(), batch.initial_state.end(), 0.0f);
  const auto total = static_cast<uint64_t>(size());
  for (int i = 0; i < B; ++i) {
    int n = 0;
    int64_t s = -1;
    while (s < 0) {  // redraws only anchors with no start (see the header): a few per env at most
      const auto u = static_cast<int64_t>(rng.uniform_int(total));
      n = static_cast<int>(std::upper_bound(stored_prefix_.begin(), stored_prefix_.end(), u) -
                           stored_prefix_.begin()) -
          1;
      s = window_start(n, oldest(n) + (u - stored_prefix_[sz(n)]));
    }
    fill_window(n, s, i, batch);
  }
}

// ---- Checkpoints
// ---------------------------------------------------------------------------------

namespace {

policy::Tensor floats(std::vector<int64_t> shape, const float* data, size_t n) {
  return policy::Tensor(std::move(shape), std::vector<float>(data, data + n));
}

policy::Tensor flags(std::vector<int64_t> shape, const std::vector<uint8_t>& v) {
  return policy::Tensor(std::move(shape), std::vector<float>(v.begin(), v.end()));
}

std::string shape_str(const std::vector<int64_t>& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

}  // namespace

void SequenceReplay::save(policy::TensorMap& out, nlohmann::json& meta,
                          const std::string& prefix) const {
  const int64_t N = spec_.num_envs, R = rows_;
  out[prefix + "obs"] = floats({N, R, spec_.obs_dim}, obs_.data(), obs_.size());
  out[prefix + "next_obs"] = floats({N, R, spec_.obs_dim}, next_obs_.data(), next_obs_.size());
  out[prefix + "actions"] = floats({N, R, spec_.action_dim}, actions_.data(), actions_.size());
  out[prefix + "rewards"] = floats({N, R}, rewards_.data(), rewards_.size());
  out[prefix + "terminated"] = flags({N, R}, terminated_);
  out[prefix + "truncated"] = flags({N, R}, truncated_);
  out[prefix + "episode_start"] = flags({N, R}, first_);
  out[prefix + "states"] = floats({N, slots_, spec_.state_size}, states_.data(), states_.size());
  meta = {{"format", kFormat},
          {"num_envs", spec_.num_envs},
          {"rows_per_env", rows_},
          {"obs_dim", spec_.obs_dim},
          {"action_dim", spec_.action_dim},
          {"state_size", spec_.state_size},
          {"state_stride", spec_.state_stride},
          {"added", added_},
          {"env_added", env_added_},
          {"env_ended", env_ended_}};
}

void SequenceReplay::restore(const policy::TensorMap& in, const nlohmann::json& meta,
                             const std::string& prefix) {
  namespace jr = json_read;
  RECUR_CHECK(meta.is_object() && meta.contains("format") && meta["format"] == kFormat,
              "the checkpoint's replay state is not a {} record (its meta is {}): {}", kFormat,
              meta.dump().substr(0, 200), kResumeHint);
  auto field = [&](const char* key) -> const nlohmann::json& {
    RECUR_CHECK(meta.contains(key), "the checkpoint's replay state lacks \"{}\": {}", key,
                kResumeHint);
    return meta[key];
  };
  const int64_t N = spec_.num_envs, R = rows_;
  const int64_t n_saved = jr::integer(field("num_envs"), "replay num_envs", 1);
  RECUR_CHECK(n_saved == N,
              "the checkpoint's replay buffer holds the streams of {} envs; this run has {}: "
              "resume with the same env.num_envs, or resume without the saved replay buffer",
              n_saved, N);
  const int64_t r_saved = jr::integer(field("rows_per_env"), "replay rows_per_env", 1);
  RECUR_CHECK(r_saved == R,
              "the checkpoint's replay buffer holds {} rows per env (capacity {}); this run's "
              "holds {} (capacity {} / {} envs): resume with the same replay capacity, or resume "
              "without the saved replay buffer",
              r_saved, r_saved * N, R, spec_.capacity, N);
  const int64_t od = jr::integer(field("obs_dim"), "replay obs_dim", 1);
  RECUR_CHECK(od == spec_.obs_dim,
              "the checkpoint's replay buffer stores observations of {} floats; this run's env "
              "gives {}: resume with the same env, or resume without the saved replay buffer",
              od, spec_.obs_dim);
  const int64_t ad = jr::integer(field("action_dim"), "replay action_dim", 1);
  RECUR_CHECK(ad == spec_.action_dim,
              "the checkpoint's replay buffer stores actions of {} floats; this run's env needs "
              "{}: resume with the same env, or resume without the saved replay buffer",
              ad, spec_.action_dim);
  const int64_t ss = jr::integer(field("state_size"), "replay state_size", 0);
  RECUR_CHECK(ss == spec_.state_size,
              "the checkpoint's replay state holds {} floats of recurrent state per stored row; "
              "this run's core needs {} (0 = zero-state sampling): resume with the same "
              "policy.core/hidden and replay mode, or resume without the saved replay buffer",
              ss, spec_.state_size);
  const int64_t stride = jr::integer(field("state_stride"), "replay state_stride", 1);
  RECUR_CHECK(spec_.state_size == 0 || stride == spec_.state_stride,
              "the checkpoint's replay buffer stored a recurrent state every {} rows; this run's "
              "state_stride is {}: resume with the same state_stride, or resume without the "
              "saved replay buffer",
              stride, spec_.state_stride);
  const auto& env_added = field("env_added");
  const auto& env_ended = field("env_ended");
  RECUR_CHECK(env_added.is_array() && env_added.size() == sz(N) && env_ended.is_array() &&
                  env_ended.size() == sz(N),
              "the checkpoint's replay state holds {} stream counters and {} end flags for {} "
              "envs: {}",
              env_added.size(), env_ended.size(), N, kResumeHint);
  std::vector<int64_t> counts(sz(N));
  std::vector<uint8_t> ended(sz(N));
  int64_t total = 0;
  for (size_t i = 0; i < sz(N); ++i) {
    counts[i] = jr::integer(env_added[i], "replay env_added", 0);
    ended[i] = static_cast<uint8_t>(jr::integer(env_ended[i], "replay env_ended", 0, 1));
    total += counts[i];
  }
  RECUR_CHECK(jr::integer(field("added"), "replay added", 0) == total,
              "the checkpoint's replay state counts {} transitions added but its envs {}: {}",
              meta["added"].dump(), total, kResumeHint);
  // Every tensor, with the shape this buffer holds, before anything changes.
  struct Expect {
    const char* name;
    std::vector<int64_t> shape;
  };
  const Expect expected[] = {{"obs", {N, R, spec_.obs_dim}},
                             {"next_obs", {N, R, spec_.obs_dim}},
                             {"actions", {N, R, spec_.action_dim}},
                             {"rewards", {N, R}},
                             {"terminated", {N, R}},
                             {"truncated", {N, R}},
                             {"episode_start", {N, R}},
                             {"states", {N, slots_, spec_.state_size}}};
  for (const auto& e : expected) {
    const auto it = in.find(prefix + e.name);
    RECUR_CHECK(it != in.end(), "the checkpoint lacks the replay tensor {}{}: {}", prefix, e.name,
                kResumeHint);
    RECUR_CHECK(it->second.shape == e.shape &&
                    it->second.data.size() == static_cast<size_t>(it->second.numel()),
                "the checkpoint's replay tensor {}{} has shape {}; this run's buffer holds {}: {}",
                prefix, e.name, shape_str(it->second.shape), shape_str(e.shape), kResumeHint);
  }
  // All checked: copy.
  auto take = [&](const char* name, auto& dst) {
    const auto& src = in.at(prefix + name).data;
    using T = typename std::decay_t<decltype(dst)>::value_type;
    for (size_t i = 0; i < src.size(); ++i) {
      if constexpr (std::is_same_v<T, uint8_t>) {
        dst[i] = src[i] != 0.0f;
      } else {
        dst[i] = src[i];
      }
    }
  };
  take("obs", obs_);
  take("next_obs", next_obs_);
  take("actions", actions_);
  take("rewards", rewards_);
  take("terminated", terminated_);
  take("truncated", truncated_);
  take("episode_start", first_);
  take("states", states_);
  env_added_ = counts;
  env_ended_ = ended;
  added_ = total;
  update_prefix();
}

}  // namespace recur::agent::offpolicy
