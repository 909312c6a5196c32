#include "envs/popgym/repeat_first.h"

#include "core/error.h"
#include "envs/popgym/sequences_deck.h"
#include "envs/popgym/sequences_render.h"

namespace recur::envs {
namespace {
using popgym::sequences::CardField;
constexpr int kSuits = 4;
}  // namespace

RepeatFirstConfig RepeatFirstConfig::read(OptionReader& options, RepeatFirstConfig defaults) {
  RepeatFirstConfig c = defaults;
  c.num_decks = static_cast<int>(options.get_int("num_decks", c.num_decks));
  RECUR_CHECK(c.num_decks >= 1 && c.num_decks <= 1000, "RepeatFirst: num_decks = {}; use 1..1000",
              c.num_decks);
  return c;
}

RepeatFirst::RepeatFirst(const RepeatFirstConfig& config)
    : Env(Space::box(0.0f, 1.0f, {kSuits}), Space::discrete(kSuits)),
      deck_(static_cast<size_t>(config.num_decks * popgym::sequences::kDeckSize)) {
  RECUR_CHECK_ARG(config.num_decks >= 1, "RepeatFirst: num_decks = {} must be >= 1",
                  config.num_decks);
  // POPGym: 1 / (num_cards - 1), in double.
  reward_scale_ = 1.0 / (num_cards() - 1);
}

void RepeatFirst::reset_impl(Rng& rng, std::optional<uint64_t> /*seed*/) {
  popgym::sequences::shuffle_deck(CardField::kSuit, deck_, rng);
  dealt_ = 1;
}

Env::Outcome RepeatFirst::step_impl(std::span<const float> action) {
  RECUR_CHECK(dealt_ < num_cards(), "RepeatFirst: every card is dealt; the episode is over");
  Outcome out;
  out.reward = static_cast<int>(action[0]) == deck_[0] ? reward_scale_ : -reward_scale_;
  out.terminated = num_cards() - dealt_ == 1;  // POPGym checks before dealing
  ++dealt_;
  return out;
}

void RepeatFirst::observe(std::span<float> obs) const {
  popgym::sequences::write_one_hot(obs, kSuits, deck_[static_cast<size_t>(dealt_ - 1)]);
}

void RepeatFirst::get_state(std::span<double> out) const {
  popgym::sequences::write_deck_state(deck_, out);
  out[deck_.size()] = dealt_;
}

void RepeatFirst::set_state_impl(std::span<const double> state) {
  const int dealt = popgym::sequences::read_count_state("RepeatFirst", "cards dealt",
                                                        state[deck_.size()], 1, num_cards());
  popgym::sequences::read_deck_state("RepeatFirst", CardField::kSuit, state, deck_);
  dealt_ = dealt;
}

// The first card (the suit to name at every step) on the left, the newest on the right.
void RepeatFirst::draw(render::Canvas& canvas) const {
  namespace seq = popgym::sequences;
  seq::draw_text(canvas, {300, 368}, 20, "RepeatFirst: card {} of {}", dealt_, num_cards());
  seq::draw_card(canvas, {170, 200}, {.suit = deck_[0]});
  seq::draw_card(canvas, {430, 200}, {.suit = deck_[static_cast<size_t>(dealt_ - 1)]});
  seq::draw_text(canvas, {170, 72}, 18, "first card: name it");
  seq::draw_text(canvas, {430, 72}, 18, "newest card (the observation)");
  seq::draw_progress(canvas, static_cast<double>(dealt_) / num_cards());
}

}  // namespace recur::envs
