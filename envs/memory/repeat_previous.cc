#include "envs/memory/repeat_previous.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "envs/popgym/sequences_render.h"
#include "envs/render/canvas.h"

namespace recur::envs {
namespace {
constexpr int kDeckSize = 52;
constexpr int kSuits = 4;

using popgym::sequences::CardFace;
using popgym::sequences::draw_text;
using render::Color;
using render::Vec2;

// The card at `at`: the suit face up, or the back when suit < 0 (not dealt yet).
void draw_card(render::Canvas& canvas, int suit, Vec2 at) {
  if (suit < 0) {
    popgym::sequences::draw_card_back(canvas, at);
    return;
  }
  CardFace face;
  face.suit = suit;
  popgym::sequences::draw_card(canvas, at, face);
}
}  // namespace

RepeatPreviousConfig RepeatPreviousConfig::read(OptionReader& options,
                                                RepeatPreviousConfig defaults) {
  RepeatPreviousConfig c = defaults;
  c.num_decks = static_cast<int>(options.get_int("num_decks", c.num_decks));
  c.k = static_cast<int>(options.get_int("k", c.k));
  RECUR_CHECK(c.num_decks >= 1 && c.num_decks <= 1000,
              "RepeatPrevious: num_decks = {}; use 1..1000", c.num_decks);
  RECUR_CHECK(c.k >= 1 && c.k < c.num_decks * kDeckSize,
              "RepeatPrevious: k = {} must be in [1, {}) for {} deck(s)", c.k,
              c.num_decks * kDeckSize, c.num_decks);
  return c;
}

RepeatPrevious::RepeatPrevious(const RepeatPreviousConfig& config)
    : Env(Space::box(0.0f, 1.0f, {kSuits}), Space::discrete(kSuits)),
      config_(config),
      deck_(static_cast<size_t>(config.num_decks * kDeckSize)) {
  RECUR_CHECK_ARG(config.k >= 1 && config.k < num_cards(), "RepeatPrevious: k = {} out of [1, {})",
                  config.k, num_cards());
  reward_scale_ = 1.0 / (num_cards() - config_.k);
}

void RepeatPrevious::reset_impl(Rng& rng, std::optional<uint64_t> /*seed*/) {
  // Card i of a fresh deck has suit i % 4 (POPGym tiles the suits over the ranks).
  for (size_t i = 0; i < deck_.size(); ++i) deck_[i] = static_cast<uint8_t>(i % kSuits);
  // Fisher-Yates shuffle.
  for (size_t i = deck_.size() - 1; i > 0; --i)
    std::swap(deck_[i], deck_[static_cast<size_t>(rng.uniform_int(i + 1))]);
  dealt_ = 1;
}

Env::Outcome RepeatPrevious::step_impl(std::span<const float> action) {
  Outcome out;
  out.terminated = num_cards() - dealt_ == 1;  // POPGym checks before dealing
  if (dealt_ >= config_.k) {
    const int target = deck_[static_cast<size_t>(dealt_ - config_.k)];
    out.reward = static_cast<int>(action[0]) == target ? reward_scale_ : -reward_scale_;
  }
  ++dealt_;
  return out;
}

void RepeatPrevious::observe(std::span<float> obs) const {
  std::fill(obs.begin(), obs.end(), 0.0f);
  obs[deck_[static_cast<size_t>(dealt_ - 1)]] = 1.0f;
}

void RepeatPrevious::get_state(std::span<double> out) const {
  for (size_t i = 0; i < deck_.size(); ++i) out[i] = deck_[i];
  out[deck_.size()] = dealt_;
}

void RepeatPrevious::set_state_impl(std::span<const double> state) {
  for (size_t i = 0; i < deck_.size(); ++i) {
    RECUR_CHECK_ARG(state[i] >= 0 && state[i] < kSuits && state[i] == std::floor(state[i]),
                    "RepeatPrevious: state[{}] = {} is not a suit", i, state[i]);
    deck_[i] = static_cast<uint8_t>(state[i]);
  }
  const double dealt = state[deck_.size()];
  RECUR_CHECK_ARG(dealt >= 1 && dealt <= num_cards() && dealt == std::floor(dealt),
                  "RepeatPrevious: {} cards dealt in the state; expected an integer in [1, {}]",
                  dealt, num_cards());
  dealt_ = static_cast<int>(dealt);
}

void RepeatPrevious::draw(render::Canvas& canvas) const {
  // Time runs left to right: the card to name (k - 1 deals before) on the left, the newest on the
  // right. Coordinates are y-up pixels of the 600x400 picture.
  const int k = config_.k;
  const int newest = deck_[static_cast<size_t>(dealt_ - 1)];
  const int target = dealt_ >= k ? deck_[static_cast<size_t>(dealt_ - k)] : -1;
  draw_text(canvas, {300, 368}, 20, "RepeatPrevious (k = {}): card {} of {}", k, dealt_,
            num_cards());

  const Vec2 left{170, 200}, right{430, 200};
  draw_card(canvas, target, left);
  draw_card(canvas, newest, right);
  draw_text(canvas, {left.x, left.y - 128}, 18, "{}",
            target >= 0 ? "name this suit" : "not dealt yet");
  draw_text(canvas, {left.x, left.y - 152}, 14, "{} deal{} before the newest", k - 1,
            k - 1 == 1 ? "" : "s");
  draw_text(canvas, {right.x, right.y - 128}, 18, "newest card");
  draw_text(canvas, {right.x, right.y - 152}, 14, "(the observation)");

  // How far through the deck the episode is (a bar, so the picture moves without fonts too).
  popgym::sequences::draw_progress(canvas, static_cast<double>(dealt_) / num_cards());

  // An arrow from the older card to the newer one.
  const Color grey{110, 110, 110};
  canvas.line({250, 200}, {340, 200}, grey, 3);
  const Vec2 head[] = {{352, 200}, {338, 208}, {338, 192}};
  canvas.fill_polygon(head, grey);
}

}  // namespace recur::envs
