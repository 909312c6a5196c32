#include "envs/popgym/concentration.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "core/error.h"
#include "envs/popgym/boards_checks.h"
#include "envs/popgym/boards_render.h"
#include "envs/popgym/sequences_render.h"
#include "envs/render/canvas.h"

namespace recur::envs {

ConcentrationConfig ConcentrationConfig::read(OptionReader& options, ConcentrationConfig defaults) {
  ConcentrationConfig c = defaults;
  c.num_decks = static_cast<int>(options.get_int("num_decks", c.num_decks));
  RECUR_CHECK(c.num_decks >= 1 && c.num_decks <= 8, "Concentration: num_decks = {}; use 1..8",
              c.num_decks);
  const long long type = options.get_int("deck_type", c.deck_type);
  RECUR_CHECK(type == kColors || type == kRanks,
              "Concentration: deck_type = {}; use 0 (match colours) or 1 (match ranks)", type);
  c.deck_type = static_cast<DeckType>(type);
  return c;
}

int ConcentrationConfig::episode_length() const {
  const double n = num_cards();
  return static_cast<int>(std::ceil(2 * n - n / (2 * n - 1)));
}

Concentration::Concentration(const ConcentrationConfig& config)
    : Env(Space::box(0.0f, 1.0f, {config.num_cards() * (config.num_values() + 1)}),
          Space::discrete(config.num_cards())),
      config_(config),
      success_reward_(1.0 / (config.num_cards() / 2)),
      failure_reward_(-1.0 / config.episode_length()),
      values_(static_cast<size_t>(config.num_cards())),
      face_up_(static_cast<size_t>(config.num_cards())) {}

void Concentration::reset_impl(Rng& rng, std::optional<uint64_t> /*seed*/) {
  // A fresh deck in POPGym's order (colours alternate, ranks in runs of 4 suits), then a
  // Fisher-Yates shuffle: the same uniform arrangement as numpy's shuffle of the deck.
  for (size_t i = 0; i < values_.size(); ++i)
    values_[i] = static_cast<uint8_t>(
        config_.deck_type == ConcentrationConfig::kColors ? i % 2 : (i % 52) / 4);
  for (size_t i = values_.size() - 1; i > 0; --i)
    std::swap(values_[i], values_[static_cast<size_t>(rng.uniform_int(i + 1))]);
  std::fill(face_up_.begin(), face_up_.end(), 0);
  num_face_up_ = 0;
  in_play_ = -1;
  shown_[0] = shown_[1] = -1;
}

Env::Outcome Concentration::step_impl(std::span<const float> action) {
  const int card = static_cast<int>(action[0]);
  Outcome out;
  const bool second = in_play_ >= 0;
  // The observation shows the cards in play before the turn ends.
  shown_[0] = second ? in_play_ : card;
  shown_[1] = second ? card : -1;
  const int in_play = second ? 2 : 1;
  const bool already_up =
      face_up_[static_cast<size_t>(card)] || (second && face_up_[static_cast<size_t>(in_play_)]);
  if (already_up) {
    out.reward = failure_reward_ * in_play;
    in_play_ = -1;
  } else if (second) {
    const int first = in_play_;
    if (first != card &&
        values_[static_cast<size_t>(first)] == values_[static_cast<size_t>(card)]) {
      out.reward = success_reward_;
      face_up_[static_cast<size_t>(first)] = face_up_[static_cast<size_t>(card)] = 1;
      num_face_up_ += 2;
      out.terminated = num_face_up_ == config_.num_cards();
    } else {
      out.reward = 2 * failure_reward_;
    }
    in_play_ = -1;
  } else {
    in_play_ = card;
  }
  return out;
}

void Concentration::observe(std::span<float> obs) const {
  std::fill(obs.begin(), obs.end(), 0.0f);
  const int width = config_.num_values() + 1;
  for (int p = 0; p < config_.num_cards(); ++p) {
    const bool visible = face_up_[static_cast<size_t>(p)] || p == shown_[0] || p == shown_[1];
    const int value = visible ? values_[static_cast<size_t>(p)] : config_.num_values();
    obs[static_cast<size_t>(p * width + value)] = 1.0f;
  }
}

void Concentration::get_state(std::span<double> out) const {
  const size_t n = values_.size();
  for (size_t i = 0; i < n; ++i) {
    out[i] = values_[i];
    out[n + i] = face_up_[i];
  }
  out[2 * n] = in_play_;
  out[2 * n + 1] = shown_[0];
  out[2 * n + 2] = shown_[1];
}

void Concentration::set_state_impl(std::span<const double> state) {
  const size_t n = values_.size();
  const int last = static_cast<int>(n) - 1;
  // Every value must appear as often as in a full deck (pairs must exist for the game to end).
  std::array<int, 13> counts{};
  int face_up = 0;
  for (size_t i = 0; i < n; ++i) {
    counts[static_cast<size_t>(
        boards::state_int(state, i, 0, config_.num_values() - 1, "Concentration", "card value"))]++;
    face_up += boards::state_int(state, n + i, 0, 1, "Concentration", "face-up flag");
  }
  for (int v = 0; v < config_.num_values(); ++v)
    RECUR_CHECK_ARG(counts[static_cast<size_t>(v)] == config_.num_cards() / config_.num_values(),
                    "Concentration: the state's cards hold value {} {} times; a deck of {} cards "
                    "holds each of its {} values {} times",
                    v, counts[static_cast<size_t>(v)], n, config_.num_values(),
                    config_.num_cards() / config_.num_values());
  const int in_play = boards::state_int(state, 2 * n, -1, last, "Concentration", "card in play");
  RECUR_CHECK_ARG(in_play < 0 || state[n + static_cast<size_t>(in_play)] == 0,
                  "Concentration: the card in play ({}) is face up", in_play);
  const int shown0 = boards::state_int(state, 2 * n + 1, -1, last, "Concentration", "shown card");
  const int shown1 = boards::state_int(state, 2 * n + 2, -1, last, "Concentration", "shown card");
  for (size_t i = 0; i < n; ++i) {
    values_[i] = static_cast<uint8_t>(state[i]);
    face_up_[i] = static_cast<uint8_t>(state[n + i]);
  }
  num_face_up_ = face_up;
  in_play_ = in_play;
  shown_[0] = shown0;
  shown_[1] = shown1;
}

RenderInfo Concentration::render_info() const {
  return {boards::kPictureSize, boards::kPictureSize, boards::kPictureFps};
}

void Concentration::draw(render::Canvas& canvas) const {
  // The table in position order, 13 cards a row (26 from three decks up), row 0 at the top.
  const int n = config_.num_cards();
  const int cols = config_.num_decks <= 2 ? 13 : 26;
  const int rows = (n + cols - 1) / cols;
  const double w = std::min(520.0 / cols, 360.0 / rows / 1.3), h = 1.3 * w;
  const double left = 300 - 0.5 * cols * w, top = 330 + 0.5 * rows * h;
  const bool colors = config_.deck_type == ConcentrationConfig::kColors;
  int up = 0;
  for (int i = 0; i < n; ++i) {
    const auto at = static_cast<size_t>(i);
    const double x0 = left + (i % cols) * w + 2, x1 = x0 + w - 4;
    const double y1 = top - (i / cols) * h - 2, y0 = y1 - h + 4;
    const render::Vec2 card[] = {{x0, y0}, {x0, y1}, {x1, y1}, {x1, y0}};
    const render::Vec2 mid{0.5 * (x0 + x1), 0.5 * (y0 + y1)};
    const bool matched = face_up_[at] != 0;
    const bool in_play = i == shown_[0] || i == shown_[1];
    const bool seen = matched || in_play;  // what the observation shows face up
    up += matched;
    canvas.fill_polygon(card, seen ? render::Color{250, 248, 240} : render::Color{70, 100, 160});
    const int value = values_[at];
    if (colors) {
      const render::Color red = seen ? render::Color{200, 30, 45} : render::Color{150, 110, 150};
      const render::Color black = seen ? boards::kInk : render::Color{45, 65, 110};
      canvas.fill_circle(mid, 0.22 * w, value == 1 ? red : black);
    } else {
      canvas.text(mid, popgym::sequences::rank_name(value), 0.42 * h,
                  seen ? boards::kInk : render::Color{140, 165, 210}, render::TextAlign::kCenter);
    }
    // A border says why a card is up: matched for good (green; thick if it matched this step),
    // or in play this step (orange); face-down cards keep a thin dark one.
    const render::Color border = matched   ? render::Color{60, 150, 60}
                                 : in_play ? render::Color{240, 140, 20}
                                           : boards::kInk;
    canvas.stroke_polygon(card, border, in_play ? 3 : 1);
  }
  const render::Color ink = boards::kInk;
  boards::draw_text(canvas, {300, 566}, 20, ink, render::TextAlign::kCenter,
                    "Concentration ({}, {} cards): {} matched", colors ? "colours" : "ranks", n,
                    up);
  boards::draw_text(canvas, {300, 80}, 16, ink, render::TextAlign::kCenter, "{}",
                    in_play_ >= 0 ? "first card of the turn up (orange): find its pair"
                    : shown_[1] >= 0 && face_up_[static_cast<size_t>(shown_[1])]
                        ? "turn over: both cards shown are face up (green)"
                    : shown_[0] >= 0 ? "turn over: the orange cards were shown, then hidden"
                                     : "no card turned yet");
  boards::draw_text(canvas, {300, 40}, 14, ink, render::TextAlign::kCenter,
                    "green: matched   orange: in play   blue: face down (faint: hidden value)");
}

}  // namespace recur::envs
