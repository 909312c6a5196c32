// CountRecall, with POPGym's rules (popgym 1.0.7, popgym/envs/count_recall.py): count how often
// each kind of card has been dealt, and answer a query about one kind every step.
//
// Two decks of num_decks * 52 cards, shuffled independently: a value deck and a query deck. Reset
// and every step deal one card from each; the agent sees the kind (colour, suit or rank, by
// difficulty) of both. Each step it must answer how many value cards of the queried kind had
// been dealt when the query was shown (that step's own value card included).
//   action  Discrete(num_cards / num_kinds + 1): the count
//   obs     Box(0, 1, (2 * num_kinds,)): POPGym's MultiDiscrete([num_kinds] * 2) as two one-hots:
//             [0, num_kinds)              kind of the newest value card
//             [num_kinds, 2 * num_kinds)  kind of the newest query card
//           kinds: colours 0 black, 1 red; suits 0 spades, 1 diamonds, 2 clubs, 3 hearts; ranks
//           0 ace, 1..9 two to ten, 10 jack, 11 queen, 12 king (popgym/core/deck.py).
//   reward  +1/(num_cards - 1) for the right count, -1/(num_cards - 1) otherwise. Optimal return
//           1 (kOptimalReturn).
//   ends    terminated on the step that deals the last cards (num_cards - 1 steps). POPGym
//           registers no time limit, and neither does recur.
// Difficulties as POPGym: Easy 1 deck of colours, Medium 2 decks of suits, Hard 4 decks of
// ranks. Option num_decks. POPGym's deck_type is a string ("colors", "suits", "ranks") and
// recur's options read numbers only, so the kind is fixed by the id. POPGym's error_clamp is
// accepted by its constructor but never used, so recur has no such option.
// Parity with popgym is checked by tools/python/tests/test_popgym_sequences.py.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "core/options.h"
#include "envs/env.h"
#include "envs/popgym/sequences_deck.h"

namespace recur::envs {

struct CountRecallConfig {
  int num_decks = 1;  // 52 cards each, in each of the two decks
  popgym::sequences::CardField deck_type = popgym::sequences::CardField::kColor;

  static CountRecallConfig read(OptionReader& options, CountRecallConfig defaults);
};

class CountRecall final : public Env {
 public:
  explicit CountRecall(const CountRecallConfig& config = {});

  int num_cards() const { return static_cast<int>(values_.size()); }
  int num_kinds() const { return num_kinds_; }
  static constexpr double kOptimalReturn = 1.0;

  // State: the kinds of the value deck in deal order (num_cards values), the kinds of the query
  // deck in deal order (num_cards values), then the cards dealt from each (1..num_cards). The
  // counts follow from the value cards dealt.
  int state_size() const override { return 2 * num_cards() + 1; }
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
  void recount();

  CountRecallConfig config_;
  int num_kinds_ = 0;
  std::vector<uint8_t> values_;   // value deck kinds in deal order
  std::vector<uint8_t> queries_;  // query deck kinds in deal order
  int dealt_ = 0;                 // cards dealt from each deck
  std::array<int, 13> counts_{};  // value cards of each kind among the dealt ones
  double reward_scale_ = 0;
};

}  // namespace recur::envs
