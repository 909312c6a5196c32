#include "envs/popgym/sequences_render.h"

#include <array>

namespace recur::envs::popgym::sequences {
namespace {

using render::Color;
using render::Vec2;

constexpr Color kRed{200, 30, 45};
constexpr Color kInk{20, 20, 20};
constexpr double kHalfW = 70, kHalfH = 98;  // px, half a card

// A suit symbol of half-height `size` px centred at `at`, from unit shapes spanning about +-1.
void draw_suit(render::Canvas& canvas, int suit, Vec2 at, double size) {
  const Color color = suit == 1 || suit == 3 ? kRed : kInk;
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

std::array<Vec2, 4> rectangle(Vec2 at, double half_w, double half_h) {
  return {Vec2{at.x - half_w, at.y - half_h}, Vec2{at.x - half_w, at.y + half_h},
          Vec2{at.x + half_w, at.y + half_h}, Vec2{at.x + half_w, at.y - half_h}};
}

}  // namespace

std::string_view rank_name(int rank) {
  static constexpr std::array<std::string_view, 13> kNames = {"A", "2", "3",  "4", "5", "6", "7",
                                                              "8", "9", "10", "J", "Q", "K"};
  return rank >= 0 && rank < 13 ? kNames[static_cast<size_t>(rank)] : "?";
}

void draw_card(render::Canvas& canvas, Vec2 at, CardFace face) {
  const auto outline = rectangle(at, kHalfW, kHalfH);
  canvas.fill_polygon(outline, {250, 248, 240});
  if (face.suit >= 0) {
    draw_suit(canvas, face.suit, {at.x, at.y - (face.rank >= 0 ? 20 : 0)}, 40);
    draw_suit(canvas, face.suit, {at.x - kHalfW + 18, at.y + kHalfH - 20}, 11);
    draw_suit(canvas, face.suit, {at.x + kHalfW - 18, at.y - kHalfH + 20}, 11);
  }
  if (face.color >= 0) {
    canvas.fill_circle({at.x, at.y + 10}, 42, face.color == 1 ? kRed : kInk);
    canvas.text({at.x, at.y - 62}, face.color == 1 ? "red" : "black", 20, kInk,
                render::TextAlign::kCenter);
  }
  if (face.rank >= 0)
    canvas.text({at.x, at.y + (face.suit >= 0 ? 50 : 0)}, rank_name(face.rank),
                face.suit >= 0 ? 36 : 64, kInk, render::TextAlign::kCenter);
  canvas.stroke_polygon(outline, render::kBlack, 2);
}

void draw_card_back(render::Canvas& canvas, Vec2 at) {
  const auto outline = rectangle(at, kHalfW, kHalfH);
  canvas.fill_polygon(outline, {52, 84, 150});
  const auto inner = rectangle(at, kHalfW - 10, kHalfH - 10);
  canvas.stroke_polygon(inner, {200, 210, 235}, 2);
  canvas.text(at, "?", 48, {200, 210, 235}, render::TextAlign::kCenter);
  canvas.stroke_polygon(outline, render::kBlack, 2);
}

void draw_progress(render::Canvas& canvas, double fraction) {
  const double end = 100 + 400.0 * std::clamp(fraction, 0.0, 1.0);
  const Vec2 bar[] = {{100, 14}, {100, 24}, {end, 24}, {end, 14}};
  canvas.fill_polygon(bar, {90, 90, 90});
  const Vec2 track[] = {{100, 14}, {100, 24}, {500, 24}, {500, 14}};
  canvas.stroke_polygon(track, {90, 90, 90}, 1);
}

void draw_column(render::Canvas& canvas, Vec2 base, double width, double height, double fraction,
                 render::Color color) {
  const double top = base.y + height * std::clamp(fraction, 0.0, 1.0);
  const Vec2 filled[] = {
      {base.x, base.y}, {base.x, top}, {base.x + width, top}, {base.x + width, base.y}};
  canvas.fill_polygon(filled, color);
  const Vec2 frame[] = {{base.x, base.y},
                        {base.x, base.y + height},
                        {base.x + width, base.y + height},
                        {base.x + width, base.y}};
  canvas.stroke_polygon(frame, {90, 90, 90}, 1);
}

}  // namespace recur::envs::popgym::sequences
