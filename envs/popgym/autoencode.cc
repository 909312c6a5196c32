#include "envs/popgym/autoencode.h"

#include "core/error.h"
#include "envs/popgym/sequences_deck.h"
#include "envs/popgym/sequences_render.h"

namespace recur::envs {
namespace {
using popgym::sequences::CardField;
constexpr int kSuits = 4;
constexpr int kModes = 2;
constexpr int kPlay = 0, kWatch = 1;  // POPGym's Mode values
}  // namespace

AutoencodeConfig AutoencodeConfig::read(OptionReader& options, AutoencodeConfig defaults) {
  AutoencodeConfig c = defaults;
  c.num_decks = static_cast<int>(options.get_int("num_decks", c.num_decks));
  RECUR_CHECK(c.num_decks >= 1 && c.num_decks <= 1000, "Autoencode: num_decks = {}; use 1..1000",
              c.num_decks);
  return c;
}

Autoencode::Autoencode(const AutoencodeConfig& config)
    : Env(Space::box(0.0f, 1.0f, {kModes + kSuits}), Space::discrete(kSuits)),
      deck_(static_cast<size_t>(config.num_decks * popgym::sequences::kDeckSize)) {
  RECUR_CHECK_ARG(config.num_decks >= 1, "Autoencode: num_decks = {} must be >= 1",
                  config.num_decks);
  reward_scale_ = 1.0 / num_cards();  // POPGym: 1 / num_cards, in double
}

void Autoencode::reset_impl(Rng& rng, std::optional<uint64_t> /*seed*/) {
  popgym::sequences::shuffle_deck(CardField::kSuit, deck_, rng);
  dealt_ = 1;
  recited_ = 0;
}

Env::Outcome Autoencode::step_impl(std::span<const float> action) {
  Outcome out;
  if (dealt_ < num_cards()) {  // watch: deal one more; the action does not count
    ++dealt_;
    return out;
  }
  const int held = dealt_ - recited_;  // cards dealt and not yet recited
  RECUR_CHECK(held >= 1, "Autoencode: every card is recited; the episode is over");
  out.terminated = held == 1;
  const int correct = deck_[static_cast<size_t>(held - 1)];
  ++recited_;
  out.reward = static_cast<int>(action[0]) == correct ? reward_scale_ : -reward_scale_;
  return out;
}

void Autoencode::observe(std::span<float> obs) const {
  const bool play = dealt_ == num_cards();
  // While watching and on the step that deals the last card: the newest card. Once recitation
  // has begun POPGym shows suit_of(card 0) = spades.
  const int suit = recited_ == 0 ? deck_[static_cast<size_t>(dealt_ - 1)] : 0;
  popgym::sequences::write_one_hot(obs, kModes, play ? kPlay : kWatch);
  popgym::sequences::write_one_hot(obs.subspan(kModes), kSuits, suit);
}

void Autoencode::get_state(std::span<double> out) const {
  popgym::sequences::write_deck_state(deck_, out);
  out[deck_.size()] = dealt_;
  out[deck_.size() + 1] = recited_;
}

void Autoencode::set_state_impl(std::span<const double> state) {
  const int n = num_cards();
  const int dealt =
      popgym::sequences::read_count_state("Autoencode", "cards dealt", state[deck_.size()], 1, n);
  // Recitation starts only once every card is dealt.
  const int recited = popgym::sequences::read_count_state(
      "Autoencode", "cards recited", state[deck_.size() + 1], 0, dealt == n ? n : 0);
  popgym::sequences::read_deck_state("Autoencode", CardField::kSuit, state, deck_);
  dealt_ = dealt;
  recited_ = recited;
}

// Left: what the agent sees (the newest card while cards are shown, a back once recitation has
// begun). Right: the card to recite next (a back while watching).
void Autoencode::draw(render::Canvas& canvas) const {
  namespace seq = popgym::sequences;
  const int n = num_cards();
  const bool play = dealt_ == n;
  seq::draw_text(canvas, {300, 368}, 20, "Autoencode: {}, {} of {} shown, {} recited",
                 play ? "recite in reverse" : "watch", dealt_, n, recited_);
  if (recited_ == 0)
    seq::draw_card(canvas, {170, 200}, {.suit = deck_[static_cast<size_t>(dealt_ - 1)]});
  else
    seq::draw_card_back(canvas, {170, 200});
  const int held = dealt_ - recited_;
  if (play && held > 0)
    seq::draw_card(canvas, {430, 200}, {.suit = deck_[static_cast<size_t>(held - 1)]});
  else
    seq::draw_card_back(canvas, {430, 200});
  seq::draw_text(canvas, {170, 72}, 18, "{}", recited_ == 0 ? "newest card shown" : "(hidden)");
  seq::draw_text(canvas, {430, 72}, 18, "{}", play ? "recite this suit" : "recited later");
  seq::draw_progress(canvas, static_cast<double>(dealt_ + recited_) / (2 * n));
}

}  // namespace recur::envs
