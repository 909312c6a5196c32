// Autoencode, with POPGym's rules (popgym 1.0.7, popgym/envs/autoencode.py): watch a deck go by,
// then recite its suits in reverse order.
//
// A shuffled deck of num_decks * 52 cards. Watch phase: reset deals the first card and each step
// deals one more (the action is ignored, reward 0) until the deck is empty; the step that deals
// the last card switches to the play phase. Play phase: each step the agent names a suit and the
// newest card not yet recited is taken back (last dealt, first recited).
//   action  Discrete(4): a suit (0 spades, 1 diamonds, 2 clubs, 3 hearts, POPGym's order)
//   obs     Box(0, 1, (6,)): POPGym's Tuple(Discrete(2) mode, Discrete(4) suit) as two one-hots:
//             [0, 2)  mode: index 0 play, 1 watch (POPGym's Mode.PLAY = 0, Mode.WATCH = 1)
//             [2, 6)  suit of the newest dealt card; once recitation has begun POPGym shows the
//                     suit of card 0 of a fresh deck (spades), and so does recur
//   reward  +1/num_cards for a correctly named suit in the play phase, -1/num_cards for a wrong
//           one, 0 while watching. Optimal return 1 (kOptimalReturn), random about -0.5.
//   ends    terminated when the first card has been recited: 2 * num_cards - 1 steps. POPGym
//           registers no time limit, and neither does recur.
// Difficulties as POPGym: Easy 1 deck, Medium 2, Hard 3 (option num_decks).
// Parity with popgym is checked by tools/python/tests/test_popgym_sequences.py.
#pragma once

#include <cstdint>
#include <vector>

#include "core/options.h"
#include "envs/env.h"

namespace recur::envs {

struct AutoencodeConfig {
  int num_decks = 1;  // 52 cards each: how many suits to remember

  static AutoencodeConfig read(OptionReader& options, AutoencodeConfig defaults);
};

class Autoencode final : public Env {
 public:
  explicit Autoencode(const AutoencodeConfig& config = {});

  int num_cards() const { return static_cast<int>(deck_.size()); }
  static constexpr double kOptimalReturn = 1.0;

  // State: the suits of the deck in deal order (num_cards values), the cards dealt (1..num_cards)
  // and the cards recited (0..num_cards; nonzero only once all are dealt). The phase follows:
  // play once every card is dealt.
  int state_size() const override { return num_cards() + 2; }
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
  int dealt_ = 0;              // deck_[0, dealt_) has been shown
  int recited_ = 0;            // deck_[dealt_ - recited_, dealt_) has been recited
  double reward_scale_ = 0;
};

}  // namespace recur::envs
