#include "envs/popgym/higher_lower.h"

#include "core/error.h"
#include "envs/popgym/sequences_deck.h"
#include "envs/popgym/sequences_render.h"

namespace recur::envs {
namespace {
using popgym::sequences::CardField;
constexpr int kRanks = 13;
constexpr int kGuessHigher = 0;
}  // namespace

HigherLowerConfig HigherLowerConfig::read(OptionReader& options, HigherLowerConfig defaults) {
  HigherLowerConfig c = defaults;
  c.num_decks = static_cast<int>(options.get_int("num_decks", c.num_decks));
  RECUR_CHECK(c.num_decks >= 1 && c.num_decks <= 1000, "HigherLower: num_decks = {}; use 1..1000",
              c.num_decks);
  return c;
}

HigherLower::HigherLower(const HigherLowerConfig& config)
    : Env(Space::box(0.0f, 1.0f, {kRanks}), Space::discrete(2)),
      deck_(static_cast<size_t>(config.num_decks * popgym::sequences::kDeckSize)) {
  RECUR_CHECK_ARG(config.num_decks >= 1, "HigherLower: num_decks = {} must be >= 1",
                  config.num_decks);
  reward_scale_ = 1.0 / num_cards();  // POPGym: 1 / deck_size, in double
}

void HigherLower::reset_impl(Rng& rng, std::optional<uint64_t> /*seed*/) {
  popgym::sequences::shuffle_deck(CardField::kRank, deck_, rng);
  dealt_ = 1;
}

Env::Outcome HigherLower::step_impl(std::span<const float> action) {
  RECUR_CHECK(dealt_ < num_cards(), "HigherLower: every card is dealt; the episode is over");
  Outcome out;
  out.terminated = num_cards() - dealt_ <= 1;  // POPGym checks before dealing
  const int current = deck_[static_cast<size_t>(dealt_ - 1)];
  const int next = deck_[static_cast<size_t>(dealt_)];
  ++dealt_;
  if (next != current) {
    const bool guessed_higher = static_cast<int>(action[0]) == kGuessHigher;
    out.reward = (next > current) == guessed_higher ? reward_scale_ : -reward_scale_;
  }
  return out;
}

void HigherLower::observe(std::span<float> obs) const {
  popgym::sequences::write_one_hot(obs, kRanks, deck_[static_cast<size_t>(dealt_ - 1)]);
}

void HigherLower::get_state(std::span<double> out) const {
  popgym::sequences::write_deck_state(deck_, out);
  out[deck_.size()] = dealt_;
}

void HigherLower::set_state_impl(std::span<const double> state) {
  const int dealt = popgym::sequences::read_count_state("HigherLower", "cards dealt",
                                                        state[deck_.size()], 1, num_cards());
  popgym::sequences::read_deck_state("HigherLower", CardField::kRank, state, deck_);
  dealt_ = dealt;
}

// The current card and the next one face down; below them, how many of each rank are dealt
// (what a card-counting agent remembers).
void HigherLower::draw(render::Canvas& canvas) const {
  namespace seq = popgym::sequences;
  const int current = deck_[static_cast<size_t>(dealt_ - 1)];
  seq::draw_text(canvas, {300, 368}, 20, "HigherLower: card {} of {}", dealt_, num_cards());
  seq::draw_card(canvas, {170, 220}, {.rank = current});
  if (dealt_ < num_cards()) seq::draw_card_back(canvas, {430, 220});
  seq::draw_text(canvas, {300, 232}, 18, "higher");
  seq::draw_text(canvas, {300, 208}, 18, "or lower?");
  int seen[kRanks] = {};
  for (int i = 0; i < dealt_; ++i) ++seen[deck_[static_cast<size_t>(i)]];
  const double each = static_cast<double>(num_cards()) / kRanks;
  for (int r = 0; r < kRanks; ++r) {
    seq::draw_column(canvas, {105 + r * 30.0, 40}, 26, 50, seen[r] / each,
                     r == current ? render::Color{200, 120, 30} : render::Color{90, 90, 90});
  }
  seq::draw_progress(canvas, static_cast<double>(dealt_) / num_cards());
}

}  // namespace recur::envs
