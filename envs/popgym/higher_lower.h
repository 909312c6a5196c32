// HigherLower, with POPGym's rules (popgym 1.0.7, popgym/envs/higher_lower.py): guess whether the
// next card's rank is higher or lower than the current one's; counting the cards already seen
// improves the odds.
//
// A shuffled deck of num_decks * 52 cards; reset deals the first card and each step deals one.
//   action  Discrete(2): 0 guesses higher, 1 guesses lower
//   obs     Box(0, 1, (13,)): one-hot rank of the newest card (POPGym's Discrete(13)): 0 ace
//           (low), 1..9 two to ten, 10 jack, 11 queen, 12 king
//   reward  +1/num_cards for a right guess, -1/num_cards for a wrong one, 0 when the ranks tie
//   ends    terminated on the step that deals the last card (num_cards - 1 steps). POPGym
//           registers no time limit, and neither does recur. The optimum depends on the deal, so
//           no reward threshold is registered.
// Difficulties as POPGym: Easy 1 deck, Medium 2, Hard 3 (option num_decks).
// Parity with popgym is checked by tools/python/tests/test_popgym_sequences.py.
#pragma once

#include <cstdint>
#include <vector>

#include "core/options.h"
#include "envs/env.h"

namespace recur::envs {

struct HigherLowerConfig {
  int num_decks = 1;  // 52 cards each; sets the episode length

  static HigherLowerConfig read(OptionReader& options, HigherLowerConfig defaults);
};

class HigherLower final : public Env {
 public:
  explicit HigherLower(const HigherLowerConfig& config = {});

  int num_cards() const { return static_cast<int>(deck_.size()); }

  // State: the ranks of the deck in deal order (num_cards values), then the cards dealt so far
  // (1..num_cards).
  int state_size() const override { return num_cards() + 1; }
  void get_state(std::span<double> out) const override;

  // A picture of the table, 600x400 at 4 fps (POPGym renders nothing; recur's choice): see
  // draw() in the .cc file for what it shows.
  RenderInfo render_info() const override { return {600, 400, 4}; }
  void draw(render::Canvas& canvas) const override;

 private:
  void set_state_impl(std::span<const double> state) override;
  void reset_impl(Rng& rng, std::optional<uint64_t> seed) override;
  Outcome step_impl(std::span<const float> action) override;
  void observe(std::span<float> obs) const override;

  std::vector<uint8_t> deck_;  // ranks in deal order, reshuffled every episode
  int dealt_ = 0;              // cards dealt; deck_[dealt_ - 1] is the newest
  double reward_scale_ = 0;
};

}  // namespace recur::envs
