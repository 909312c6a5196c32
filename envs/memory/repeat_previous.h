// RepeatPrevious, with POPGym's rules (proroklab/popgym, popgym/envs/repeat_previous.py): a memory
// probe whose optimal return is known (1.0), the cleanest proof that a recurrent policy works.
//
// A shuffled deck of num_decks * 52 cards is dealt one card per step; the agent sees the suit of
// the newest card and must name the suit of the card k - 1 deals before it (the k-th newest card
// in its hand). Reset deals the first card.
//   action  Discrete(4): a suit
//   obs     Box(0, 1, (4,)): one-hot suit of the newest card (POPGym returns the index; recur
//           one-hot encodes it so that every observation is a float vector)
//   reward  +1/(num_cards - k) when the named suit is right and -1/(num_cards - k) when wrong, on
//           every step once k cards have been dealt; 0 before. Optimal return 1, random about -0.5.
//   ends    terminated on the step that deals the last card (num_cards - 1 steps); POPGym
//           registers no time limit, and neither does recur.
// Difficulties as POPGym: Easy (1 deck, k 4), Medium (2 decks, k 32), Hard (3 decks, k 64).
// Checked against popgym 1.0.7 step for step (deck put into recur's state, same actions) and in
// its reset distribution by tools/python/tests/test_popgym_sequences.py.
#pragma once

#include <cstdint>
#include <vector>

#include "core/options.h"
#include "envs/env.h"

namespace recur::envs {

struct RepeatPreviousConfig {
  int num_decks = 1;  // 52 cards each; sets the episode length
  int k = 4;          // how far back the suit to repeat lies (1 = the newest card)

  static RepeatPreviousConfig read(OptionReader& options, RepeatPreviousConfig defaults);
};

class RepeatPrevious final : public Env {
 public:
  explicit RepeatPrevious(const RepeatPreviousConfig& config = {});

  int num_cards() const { return static_cast<int>(deck_.size()); }
  // The optimal policy's return: every scored step right.
  static constexpr double kOptimalReturn = 1.0;

  // State: the suits of the deck in deal order (num_cards values), then the cards dealt so far.
  int state_size() const override { return num_cards() + 1; }
  void get_state(std::span<double> out) const override;

  // A table of two cards, 600x400 at 4 fps (POPGym renders nothing; the fps is recur's choice,
  // slow enough to read the suits): the newest card (what the agent sees now) and the card whose
  // suit it must name next (k - 1 deals earlier; face down until k cards are dealt). Suits as
  // POPGym orders them: 0 spades, 1 diamonds, 2 clubs, 3 hearts.
  RenderInfo render_info() const override { return {600, 400, 4}; }
  void draw(render::Canvas& canvas) const override;

 private:
  void set_state_impl(std::span<const double> state) override;
  void reset_impl(Rng& rng, std::optional<uint64_t> seed) override;
  Outcome step_impl(std::span<const float> action) override;
  void observe(std::span<float> obs) const override;

  RepeatPreviousConfig config_;
  std::vector<uint8_t> deck_;  // suits in deal order, reshuffled every episode
  int dealt_ = 0;              // cards in the hand; deck_[0, dealt_) is the hand
  double reward_scale_ = 0;
};

}  // namespace recur::envs
