#include "envs/popgym/multiarmed_bandit.h"

#include <algorithm>

#include "core/error.h"
#include "envs/popgym/sequences_deck.h"
#include "envs/popgym/sequences_render.h"

namespace recur::envs {

MultiarmedBanditConfig MultiarmedBanditConfig::read(OptionReader& options,
                                                    MultiarmedBanditConfig defaults) {
  MultiarmedBanditConfig c = defaults;
  c.num_bandits = static_cast<int>(options.get_int("num_bandits", c.num_bandits));
  // The registry applies the same max_episode_steps; reading it here ties the two together.
  // 0 (no limit of recur's) leaves truncation to an outer time limit, as gymnasium.make's.
  const long long limit = options.get_int("max_episode_steps", c.episode_length);
  const long long length = options.get_int("episode_length", limit > 0 ? limit : c.episode_length);
  RECUR_CHECK(c.num_bandits >= 1 && c.num_bandits <= 1'000'000,
              "MultiarmedBandit: num_bandits = {}; use 1..1000000", c.num_bandits);
  RECUR_CHECK(length >= 1 && length <= 10'000'000,
              "MultiarmedBandit: episode_length = {}; use 1..10000000", length);
  RECUR_CHECK(limit == 0 || length == limit,
              "MultiarmedBandit: episode_length = {} but max_episode_steps = {}; POPGym truncates "
              "after episode_length steps, which recur does with the time limit: give both the "
              "same value (or only max_episode_steps)",
              length, limit);
  c.episode_length = static_cast<int>(length);
  return c;
}

MultiarmedBandit::MultiarmedBandit(const MultiarmedBanditConfig& config)
    : Env(Space::box(0.0f, 1.0f, {2}), Space::discrete(config.num_bandits)),
      config_(config),
      bandits_(static_cast<size_t>(config.num_bandits)),
      draws_(static_cast<size_t>(config.episode_length)) {
  RECUR_CHECK_ARG(config.num_bandits >= 1 && config.episode_length >= 1,
                  "MultiarmedBandit: num_bandits = {} and episode_length = {} must be >= 1",
                  config.num_bandits, config.episode_length);
}

void MultiarmedBandit::reset_impl(Rng& rng, std::optional<uint64_t> /*seed*/) {
  // numpy's float32 random(): the top 24 bits of a draw, times 2^-24.
  for (float& p : bandits_) p = static_cast<float>(rng.next_u64() >> 40) * 0x1.0p-24f;
  for (double& d : draws_) d = rng.uniform();  // numpy's random(): 53 bits
  steps_ = 0;
  paid_ = 0;
}

Env::Outcome MultiarmedBandit::step_impl(std::span<const float> action) {
  RECUR_CHECK(steps_ < config_.episode_length,
              "MultiarmedBandit: the episode is over after episode_length = {} steps (POPGym "
              "truncates it there; without recur's time limit an outer one must stop it)",
              config_.episode_length);
  const float p = bandits_[static_cast<size_t>(action[0])];
  // POPGym compares a float64 draw with the float32 probability (numpy promotes to float64).
  paid_ = draws_[static_cast<size_t>(steps_)] < static_cast<double>(p) ? 1 : 0;
  ++steps_;
  Outcome out;
  out.reward = (paid_ ? 1.0 : -1.0) / config_.episode_length;
  return out;
}

void MultiarmedBandit::observe(std::span<float> obs) const {
  popgym::sequences::write_one_hot(obs, 2, paid_);
}

void MultiarmedBandit::get_state(std::span<double> out) const {
  const size_t n = bandits_.size(), len = draws_.size();
  for (size_t i = 0; i < n; ++i) out[i] = bandits_[i];
  for (size_t t = 0; t < len; ++t) out[n + t] = draws_[t];
  out[n + len] = steps_;
  out[n + len + 1] = paid_;
}

void MultiarmedBandit::set_state_impl(std::span<const double> state) {
  const size_t n = bandits_.size(), len = draws_.size();
  for (size_t i = 0; i < n; ++i) {
    const double p = state[i];
    RECUR_CHECK_ARG(p >= 0 && p <= 1 && static_cast<double>(static_cast<float>(p)) == p,
                    "MultiarmedBandit: state[{}] = {} is not a payout probability (a float32 in "
                    "[0, 1])",
                    i, p);
  }
  for (size_t t = 0; t < len; ++t) {
    const double d = state[n + t];
    RECUR_CHECK_ARG(d >= 0 && d < 1, "MultiarmedBandit: state[{}] = {} is not a draw in [0, 1)",
                    n + t, d);
  }
  const int steps = popgym::sequences::read_count_state("MultiarmedBandit", "steps taken",
                                                        state[n + len], 0, config_.episode_length);
  const int paid = popgym::sequences::read_count_state("MultiarmedBandit", "last observation",
                                                       state[n + len + 1], 0, steps > 0 ? 1 : 0);
  for (size_t i = 0; i < n; ++i) bandits_[i] = static_cast<float>(state[i]);
  for (size_t t = 0; t < len; ++t) draws_[t] = state[n + t];
  steps_ = steps;
  paid_ = paid;
}

// One column per arm, filled to its payout probability (hidden from the agent), and whether the
// last pull paid (the observation).
void MultiarmedBandit::draw(render::Canvas& canvas) const {
  namespace seq = popgym::sequences;
  seq::draw_text(canvas, {300, 368}, 20, "MultiarmedBandit: pull {} of {}; last pull {}", steps_,
                 config_.episode_length, steps_ == 0 ? "-" : (paid_ ? "paid" : "did not pay"));
  const double width = 460.0 / config_.num_bandits;
  for (int a = 0; a < config_.num_bandits; ++a)
    seq::draw_column(canvas, {70 + a * width + 1, 60}, std::max(width - 2, 1.0), 270,
                     bandits_[static_cast<size_t>(a)], render::Color{52, 84, 150});
  seq::draw_text(canvas, {300, 44}, 16, "payout probability of each arm (hidden)");
  seq::draw_progress(canvas, static_cast<double>(steps_) / config_.episode_length);
}

}  // namespace recur::envs
