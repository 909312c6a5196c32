// Concentration, with POPGym's rules (popgym 1.0.7, popgym/envs/concentration.py): a shuffled
// deck lies face down; the agent turns two cards per turn and scores when they match.
//
// Cards match by colour (deck_type colors: card i of a fresh deck is black when i is even, red
// when odd) or by rank (deck_type ranks: card i has rank (i % 52) / 4); the deck is shuffled
// uniformly at reset. A turn is two steps: the first flip shows a card (reward 0), the second
// shows both, then a match stays face up and a mismatch turns both face down again. Turning a
// card that is already face up ends the turn at once with a penalty for each card in play.
//   action  Discrete(num_cards): the table position to flip
//   obs     Box(0, 1, (num_cards * (V + 1),)): POPGym's MultiDiscrete([V + 1] * num_cards), one
//           one-hot of V + 1 per position in table order: the card's value (0..V-1: colour b, r
//           or rank a..k) when face up or in play at this step, V when face down; V = 2 for
//           colors, 13 for ranks
//   reward  +1/(num_cards/2) for a match; -1/L per card in play when a face-up card is turned
//           and -2/L for a mismatch (L = ceil(2n - n/(2n-1)), POPGym's episode_length, n =
//           num_cards; the expected turns of a perfect player); 0 for a first flip
//   ends    terminated when every card is face up; truncated after L steps (through the
//           registered time limit; both can be true at once, as in POPGym)
// Difficulties as POPGym: Easy (1 deck, colors), Medium (2 decks, colors), Hard (1 deck, ranks).
// deck_type is an integer option (0 colors, 1 ranks): recur's options read numbers and booleans.
#pragma once

#include <cstdint>
#include <vector>

#include "core/options.h"
#include "envs/env.h"

namespace recur::envs {

struct ConcentrationConfig {
  enum DeckType { kColors = 0, kRanks = 1 };
  int num_decks = 1;            // 52 cards each; 1..8
  DeckType deck_type = kRanks;  // what must match

  static ConcentrationConfig read(OptionReader& options, ConcentrationConfig defaults);
  int num_cards() const { return 52 * num_decks; }
  int num_values() const { return deck_type == kColors ? 2 : 13; }  // V
  int episode_length() const;                                       // L
};

class Concentration final : public Env {
 public:
  explicit Concentration(const ConcentrationConfig& config = {});

  // State: the card values in table order (num_cards, 0..V-1), the face-up flags (num_cards),
  // the position of the card in play since the first flip of a turn (-1 none), and the two
  // positions the last observation showed besides the face-up cards (POPGym's
  // last_in_play_idx, -1 none). Size 2 * num_cards + 3.
  int state_size() const override { return 2 * config_.num_cards() + 3; }
  void get_state(std::span<double> out) const override;

  // The table, 600x600 at 4 fps (POPGym renders nothing; recur's choice): matched cards face up,
  // the cards in play this step turned over, the rest face down with their hidden values faint.
  RenderInfo render_info() const override;
  void draw(render::Canvas& canvas) const override;

 private:
  void set_state_impl(std::span<const double> state) override;
  void reset_impl(Rng& rng, std::optional<uint64_t> seed) override;
  Outcome step_impl(std::span<const float> action) override;
  void observe(std::span<float> obs) const override;

  ConcentrationConfig config_;
  double success_reward_ = 0;     // 1 / (num_cards / 2)
  double failure_reward_ = 0;     // -1 / L
  std::vector<uint8_t> values_;   // (num_cards,) card values in table order
  std::vector<uint8_t> face_up_;  // (num_cards,) 1 = matched, face up for good
  int num_face_up_ = 0;
  int in_play_ = -1;         // first card of the current turn
  int shown_[2] = {-1, -1};  // the cards in play when the observation was taken
};

}  // namespace recur::envs
