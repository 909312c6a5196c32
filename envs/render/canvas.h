// Canvas: the small drawing API env families render through (Cairo underneath; only canvas.cc
// includes cairo.h). Antialiased, RGB, white-on-clear as Gymnasium's pygame scenes.
//
// Coordinates are Gymnasium's: env code writes the y-up numbers its Python twin hands to pygame
// before `pygame.transform.flip(surf, False, True)`, and the Canvas does the flip. A world point
// p goes through the current transform (scale, offset, then any translate/rotate/scale pushed on
// top) to a y-up pixel point (px, py); integer (px, py) is the centre of image pixel
// (column px, row height - 1 - py), exactly where pygame's integer coordinates land after the flip.
//
//   Canvas c(600, 400);
//   c.clear(kWhite);
//   c.set_transform(125, {300, 0});              // metres -> y-up pixels
//   c.fill_polygon(cart, {0, 0, 0});
//   c.push(); c.translate({x, 0.86}); c.rotate(-theta); c.fill_polygon(pole, brown); c.pop();
//   const Frame& f = c.frame();                  // (H, W, 3) RGB, row 0 at the top
//
// Lengths: radii and polygon points are world units (scaled by the transform); line widths and
// text sizes are pixels, whatever the transform (pygame's widths are pixels too).
// A Canvas is not thread-safe; use one per thread.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "envs/render/frame.h"

namespace recur::envs::render {

// An opaque colour, 0..255 per channel as Gymnasium's tuples, e.g. {202, 152, 101}.
struct Color {
  uint8_t r = 0, g = 0, b = 0;
  friend bool operator==(const Color&, const Color&) = default;
};
inline constexpr Color kWhite{255, 255, 255};
inline constexpr Color kBlack{0, 0, 0};

struct Vec2 {
  double x = 0, y = 0;
};

// Gymnasium's helpers, for scenes ported from its render(): pygame.math.Vector2.rotate_rad (the
// counter-clockwise rotation in y-up space) and the int() truncation pygame.gfxdraw applies to
// every coordinate.
inline Vec2 rotated(Vec2 p, double radians) {
  const double c = std::cos(radians), s = std::sin(radians);
  return {p.x * c - p.y * s, p.x * s + p.y * c};
}
inline Vec2 truncated(Vec2 p) {
  return {std::trunc(p.x), std::trunc(p.y)};
}

// Where text sits relative to its anchor point (horizontally; vertically it is centred).
enum class TextAlign { kLeft, kCenter, kRight };

class Canvas {
 public:
  // An image of width x height pixels (both in [1, 16384]), cleared to white, identity transform.
  Canvas(int width, int height);
  ~Canvas();
  Canvas(Canvas&&) noexcept;
  Canvas& operator=(Canvas&&) noexcept;
  Canvas(const Canvas&) = delete;
  Canvas& operator=(const Canvas&) = delete;

  int width() const { return width_; }
  int height() const { return height_; }

  // Paints every pixel (the transform plays no part), drops any pushed transforms and resets the
  // transform to the identity (world units = y-up pixels).
  void clear(Color color);

  // World -> y-up pixels: pixel = offset + scale * world (scale > 0). Replaces the current
  // transform; a later pop() still restores the one its push() saved.
  void set_transform(double scale, Vec2 offset = {});
  // Saves the current transform; pop() restores the last saved one (as cairo_save/restore).
  void push();
  void pop();
  // Compose onto the current transform, in current world units (as a Box2D body's frame):
  // translate moves the origin, rotate turns counter-clockwise (y-up) by radians, scale scales
  // each axis (a negative value mirrors).
  void translate(Vec2 by);
  void rotate(double radians);
  void scale(double sx, double sy);

  // Shapes. Polygons need >= 3 points (fewer draw nothing); the outline is closed.
  void fill_polygon(std::span<const Vec2> points, Color color);
  void stroke_polygon(std::span<const Vec2> points, Color color, double width_px);
  void fill_circle(Vec2 center, double radius, Color color);
  void stroke_circle(Vec2 center, double radius, Color color, double width_px);
  // A circular arc from angle `from` to `to` (radians, counter-clockwise in y-up world space when
  // to > from, clockwise when to < from).
  void stroke_arc(Vec2 center, double radius, double from, double to, Color color, double width_px);
  void line(Vec2 a, Vec2 b, Color color, double width_px);
  void polyline(std::span<const Vec2> points, Color color, double width_px);
  // Upright text (never rotated or mirrored by the transform) in Cairo's sans-serif toy font,
  // anchored at a world point; size is the font's em size in pixels.
  void text(Vec2 anchor, std::string_view text, double size_px, Color color,
            TextAlign align = TextAlign::kLeft);

  // The picture so far as an RGB Frame. The Frame lives in the Canvas and is overwritten by the
  // next call (its buffer is reused: no allocation after the first call).
  const Frame& frame();

 private:
  struct Impl;  // the Cairo surface and context (canvas.cc)
  std::unique_ptr<Impl> impl_;
  int width_ = 0;
  int height_ = 0;
  Frame frame_;
};

}  // namespace recur::envs::render
