#include "envs/memory/repeat_previous.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "core/error.h"
#include "envs/render/canvas.h"

namespace recur::envs {
namespace {
constexpr int kDeckSize = 52;
constexpr int kSuits = 4;

using render::Color;
using render::Vec2;

// A suit symbol of half-height `size` px centred at `at`, from unit shapes (spans about +-1).
void draw_suit(render::Canvas& canvas, int suit, Vec2 at, double size) {
  const bool red = suit == 1 || suit == 3;
  const Color color = red ? Color{200, 30, 45} : Color{20, 20, 20};
  canvas.push();
  canvas.translate(at);
  canvas.scale(size, size);
  const Vec2 stem[] = {{0, -0.1}, {-0.32, -0.95}, {0.32, -0.95}};
  switch (suit) {
    case 0: {  // spades: an upside-down heart on a stem
      const Vec2 top[] = {{-0.9, -0.1}, {0.9, -0.1}, {0, 1.0}};
      canvas.fill_polygon(top, color);
      canvas.fill_circle({-0.44, -0.26}, 0.47, color);
      canvas.fill_circle({0.44, -0.26}, 0.47, color);
      canvas.fill_polygon(stem, color);
      break;
    }
    case 1: {  // diamonds
      const Vec2 diamond[] = {{0, 1}, {0.72, 0}, {0, -1}, {-0.72, 0}};
      canvas.fill_polygon(diamond, color);
      break;
    }
    case 2:  // clubs: three leaves on a stem
      canvas.fill_circle({0, 0.48}, 0.4, color);
      canvas.fill_circle({-0.46, -0.14}, 0.4, color);
      canvas.fill_circle({0.46, -0.14}, 0.4, color);
      canvas.fill_circle({0, 0.08}, 0.25, color);
      canvas.fill_polygon(stem, color);
      break;
    default: {  // hearts
      const Vec2 bottom[] = {{-0.98, 0.16}, {0.98, 0.16}, {0, -1.0}};
      canvas.fill_polygon(bottom, color);
      canvas.fill_circle({-0.48, 0.32}, 0.52, color);
      canvas.fill_circle({0.48, 0.32}, 0.52, color);
      break;
    }
  }
  canvas.pop();
}

// A 140x196 px card centred at `at`: the suit face up, or the back when suit < 0.
void draw_card(render::Canvas& canvas, int suit, Vec2 at) {
  constexpr double kHalfW = 70, kHalfH = 98;
  const Vec2 outline[] = {{at.x - kHalfW, at.y - kHalfH},
                          {at.x - kHalfW, at.y + kHalfH},
                          {at.x + kHalfW, at.y + kHalfH},
                          {at.x + kHalfW, at.y - kHalfH}};
  if (suit < 0) {
    canvas.fill_polygon(outline, {52, 84, 150});
    const Vec2 inner[] = {{at.x - kHalfW + 10, at.y - kHalfH + 10},
                          {at.x - kHalfW + 10, at.y + kHalfH - 10},
                          {at.x + kHalfW - 10, at.y + kHalfH - 10},
                          {at.x + kHalfW - 10, at.y - kHalfH + 10}};
    canvas.stroke_polygon(inner, {200, 210, 235}, 2);
    canvas.text(at, "?", 48, {200, 210, 235}, render::TextAlign::kCenter);
  } else {
    canvas.fill_polygon(outline, {250, 248, 240});
    draw_suit(canvas, suit, at, 46);
    draw_suit(canvas, suit, {at.x - kHalfW + 18, at.y + kHalfH - 20}, 11);
    draw_suit(canvas, suit, {at.x + kHalfW - 18, at.y - kHalfH + 20}, 11);
  }
  canvas.stroke_polygon(outline, render::kBlack, 2);
}

// Text formatted into a stack buffer (rendering allocates nothing).
template <typename... Args>
void draw_text(render::Canvas& canvas, Vec2 at, double size, fmt::format_string<Args...> format,
               Args&&... args) {
  char buffer[128];
  const auto out = fmt::format_to_n(buffer, sizeof(buffer), format, std::forward<Args>(args)...);
  canvas.text(at, {buffer, std::min(out.size, sizeof(buffer))}, size, render::kBlack,
              render::TextAlign::kCenter);
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
  const double done = 100 + 400.0 * dealt_ / num_cards();
  const Vec2 bar[] = {{100, 14}, {100, 24}, {done, 24}, {done, 14}};
  canvas.fill_polygon(bar, {90, 90, 90});
  const Vec2 track[] = {{100, 14}, {100, 24}, {500, 24}, {500, 14}};
  canvas.stroke_polygon(track, {90, 90, 90}, 1);

  // An arrow from the older card to the newer one.
  const Color grey{110, 110, 110};
  canvas.line({250, 200}, {340, 200}, grey, 3);
  const Vec2 head[] = {{352, 200}, {338, 208}, {338, 192}};
  canvas.fill_polygon(head, grey);
}

}  // namespace recur::envs
