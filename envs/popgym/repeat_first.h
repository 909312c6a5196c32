// RepeatFirst, with POPGym's rules (popgym 1.0.7, popgym/envs/repeat_first.py): name the suit of
// the first card of the episode at every step.
//
// A shuffled deck of num_decks * 52 cards is dealt one card per step; reset deals the first card.
//   action  Discrete(4): a suit (0 spades, 1 diamonds, 2 clubs, 3 hearts, POPGym's order)
//   obs     Box(0, 1, (4,)): one-hot suit of the newest card (POPGym's Discrete(4) observation).
//           Nothing marks the first card: it is the observation of reset.
//   reward  +1/(num_cards - 1) when the named suit is the first card's, else -1/(num_cards - 1),
//           on every step. Optimal return 1 (kOptimalReturn), a random policy about -0.5.
//   ends    terminated on the step that deals the last card (num_cards - 1 steps). POPGym
//           registers no time limit, and neither does recur.
// Difficulties as POPGym: Easy 1 deck, Medium 8, Hard 16 (option num_decks).
// Parity with popgym is checked by tools/python/tests/test_popgym_sequences.py.
#pragma once

#include <cstdint>
#include <vector>

#include "core/options.h"
#include "envs/env.h"

namespace recur::envs {

struct RepeatFirstConfig {
  int num_decks = 1;  // 52 cards each; sets the episode length

  static RepeatFirstConfig read(OptionReader& options, RepeatFirstConfig defaults);
};

class RepeatFirst final : public Env {
 public:
  explicit RepeatFirst(const RepeatFirstConfig& config = {});

  int num_cards() const { return static_cast<int>(deck_.size()); }
  static constexpr double kOptimalReturn = 1.0;

  // State: the suits of the deck in deal order (num_cards values; the first is the suit to
  // name), then the cards dealt so far (1..num_cards).
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

  std::vector<uint8_t> deck_;  // suits in deal order, reshuffled every episode
  int dealt_ = 0;              // cards dealt; deck_[dealt_ - 1] is the newest
  double reward_scale_ = 0;
};

}  // namespace recur::envs
