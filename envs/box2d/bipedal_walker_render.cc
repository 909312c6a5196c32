// BipedalWalker's picture: Gymnasium's BipedalWalker.render(). Gymnasium draws in
// world * SCALE pixels on a surface 600 + scroll * 30 wide and keeps its rightmost 600 columns;
// here the same pixel numbers go through a transform that shifts by those dropped columns.
// Nothing here allocates: polygons live on the stack.
#include <algorithm>
#include <array>
#include <cmath>

#include "envs/box2d/bipedal_walker.h"
#include "envs/render/canvas.h"

namespace recur::envs {
namespace {

using bipedal::kScale;
using render::Color;
using render::Vec2;

constexpr Color kSky{215, 215, 255};
constexpr Color kGrass{102, 153, 76};
constexpr Color kLidar{255, 0, 0};
constexpr Color kObstacleFill{255, 255, 255};
constexpr Color kObstacleLine{153, 153, 153};
constexpr Color kHullFill{127, 51, 229};
constexpr Color kHullLine{76, 76, 127};
constexpr Color kFlag{230, 51, 0};
// Legs: side -1 (drawn first), side +1: Gymnasium's (153 - 25 i, 76 - 25 i, 127 - 25 i) fills and
// (102 - 25 i, 51 - 25 i, 76 - 25 i) outlines.
constexpr Color kLegFill[2] = {{178, 101, 152}, {128, 51, 102}};
constexpr Color kLegLine[2] = {{127, 76, 101}, {77, 26, 51}};

// A body's polygon fixture in pixels: fill, then a 1 px outline (pygame polygon + aapolygon).
void draw_body(render::Canvas& canvas, const b2Body* body, Color fill, Color line) {
  for (const b2Fixture* f = body->GetFixtureList(); f; f = f->GetNext()) {
    if (f->GetType() != b2Shape::e_polygon) continue;
    const auto* shape = static_cast<const b2PolygonShape*>(f->GetShape());
    Vec2 path[b2_maxPolygonVertices];
    const int n = shape->m_count;
    for (int k = 0; k < n; ++k) {
      const b2Vec2 p = b2Mul(body->GetTransform(), shape->m_vertices[k]);
      path[k] = {p.x * kScale, p.y * kScale};
    }
    canvas.fill_polygon({path, static_cast<size_t>(n)}, fill);
    canvas.stroke_polygon({path, static_cast<size_t>(n)}, line, 1);
  }
}

}  // namespace

void BipedalWalker::draw(render::Canvas& canvas) const {
  const bipedal::Physics& p = physics_;
  const bipedal::Terrain& t = p.terrain();
  const double scroll = p.state().x - bipedal::kViewportW / kScale / 5;
  const double view_w = bipedal::kViewportW / kScale;
  // pygame.Surface truncates its float width; the frame is its rightmost 600 columns.
  const double dropped = std::trunc(std::max(0.0, scroll) * kScale);
  canvas.clear(render::kBlack);  // a new pygame Surface is black (seen when scroll < 0)
  canvas.set_transform(1, {-dropped, 0});

  // pygame fills whole pixels from integer corners; half a pixel of margin makes Cairo's
  // antialiased edge cover the same columns and rows.
  const double left = std::floor(scroll * kScale) - 0.5, right = left + bipedal::kViewportW + 1;
  const Vec2 sky[] = {{left, -0.5},
                      {right, -0.5},
                      {right, bipedal::kViewportH + 0.5},
                      {left, bipedal::kViewportH + 0.5}};
  canvas.fill_polygon(sky, kSky);

  for (const bipedal::Cloud& c : t.clouds) {  // half-speed parallax
    if (c.x2 < scroll / 2 || c.x1 > scroll / 2 + view_w) continue;
    Vec2 poly[5];
    for (size_t k = 0; k < 5; ++k)
      poly[k] = {c.poly[k].x * kScale + scroll * kScale / 2, c.poly[k].y * kScale};
    canvas.fill_polygon(poly, render::kWhite);
  }

  // Gymnasium fills one grass polygon per visible terrain segment, down to y = 0; their union,
  // filled as one polygon, is the same area without antialiased seams between the segments.
  std::array<Vec2, bipedal::kTerrainLength + 2> grass;
  size_t n = 0;
  for (size_t i = 0; i + 1 < t.x.size(); ++i) {
    if (t.x[i + 1] < scroll || t.x[i] > scroll + view_w) continue;
    if (n == 0) grass[n++] = {t.x[i] * kScale, t.y[i] * kScale};
    grass[n++] = {t.x[i + 1] * kScale, t.y[i + 1] * kScale};
  }
  if (n >= 2) {
    const double x0 = grass[0].x, x1 = grass[n - 1].x;
    grass[n++] = {x1, -0.5};
    grass[n++] = {x0, -0.5};
    canvas.fill_polygon({grass.data(), n}, kGrass);
  }

  // One lidar ray per frame, sweeping 0..9 and back during the first 20 of every 100 frames.
  const int ray = (steps_ + 1) % 100;
  if (ray < 2 * bipedal::kLidarRays) {
    const int k = ray < bipedal::kLidarRays ? ray : 2 * bipedal::kLidarRays - 1 - ray;
    const b2Vec2 a = p.lidar_from();
    const b2Vec2 b = p.lidar_to()[static_cast<size_t>(k)];
    canvas.line({a.x * kScale, a.y * kScale}, {b.x * kScale, b.y * kScale}, kLidar, 1);
  }

  // Gymnasium's drawlist: terrain reversed (edges last to first, then obstacles last to first),
  // legs, hull.
  for (size_t i = t.x.size() - 1; i-- > 0;) {
    const Color edge{76, static_cast<uint8_t>(i % 2 == 0 ? 255 : 204), 76};
    canvas.line({t.x[i] * kScale, t.y[i] * kScale}, {t.x[i + 1] * kScale, t.y[i + 1] * kScale},
                edge, 1);
  }
  const auto obstacles = p.obstacle_bodies();
  for (size_t i = obstacles.size(); i-- > 0;)
    draw_body(canvas, obstacles[i], kObstacleFill, kObstacleLine);
  for (size_t k = 0; k < 4; ++k) draw_body(canvas, p.legs()[k], kLegFill[k / 2], kLegLine[k / 2]);
  draw_body(canvas, p.hull(), kHullFill, kHullLine);

  // The start flag.
  const double fx = bipedal::kTerrainStep * 3 * kScale;
  const double fy1 = bipedal::kTerrainHeight * kScale, fy2 = fy1 + 50;
  canvas.line({fx, fy1}, {fx, fy2}, render::kBlack, 1);
  const Vec2 flag[] = {{fx, fy2}, {fx, fy2 - 10}, {fx + 25, fy2 - 5}};
  canvas.fill_polygon(flag, kFlag);
  canvas.stroke_polygon(flag, render::kBlack, 1);
}

}  // namespace recur::envs
