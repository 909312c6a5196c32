#include "envs/box2d/bipedal_walker_terrain.h"

#include <algorithm>
#include <cmath>

#include "core/rng.h"

namespace recur::envs::bipedal {
namespace {

enum State : int64_t { kGrass = 0, kStump = 1, kStairs = 2, kPit = 3, kStates = 4 };

double np_sign(double v) {  // np.sign: 0 at 0
  return v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0);
}

}  // namespace

double RngDraws::uniform(double low, double high) {
  return rng_.uniform(low, high);
}
int64_t RngDraws::integers(int64_t low, int64_t high) {
  return low + static_cast<int64_t>(rng_.uniform_int(static_cast<uint64_t>(high - low)));
}
double RngDraws::random() {
  return rng_.uniform();
}

void generate_terrain(bool hardcore, BipedalDraws& draws, Terrain& out) {
  constexpr double S = kTerrainStep;
  out.x.clear();
  out.y.clear();
  out.obstacles.clear();
  int64_t state = kGrass;
  double velocity = 0.0;
  double y = kTerrainHeight;
  int64_t counter = kTerrainStartpad;
  bool oneshot = false;
  int64_t stair_steps = 0, stair_width = 0, stair_height = 0;
  double original_y = 0;
  for (int i = 0; i < kTerrainLength; ++i) {
    const double x = i * S;
    out.x.push_back(x);
    if (state == kGrass && !oneshot) {
      velocity = 0.8 * velocity + 0.01 * np_sign(kTerrainHeight - y);
      if (i > kTerrainStartpad) velocity += draws.uniform(-1, 1) / kScale;
      y += velocity;
    } else if (state == kPit && oneshot) {
      counter = draws.integers(3, 5);
      const Obstacle poly = {Point{x, y}, Point{x + S, y}, Point{x + S, y - 4 * S},
                             Point{x, y - 4 * S}};
      out.obstacles.push_back(poly);
      Obstacle shifted = poly;
      for (Point& p : shifted) p.x = p.x + S * static_cast<double>(counter);
      out.obstacles.push_back(shifted);
      counter += 2;
      original_y = y;
    } else if (state == kPit && !oneshot) {
      y = original_y;
      if (counter > 1) y -= 4 * S;
    } else if (state == kStump && oneshot) {
      counter = draws.integers(1, 3);
      const double side = static_cast<double>(counter) * S;
      out.obstacles.push_back(
          {Point{x, y}, Point{x + side, y}, Point{x + side, y + side}, Point{x, y + side}});
    } else if (state == kStairs && oneshot) {
      stair_height = draws.random() > 0.5 ? 1 : -1;
      stair_width = draws.integers(4, 5);  // always 4, but Gymnasium draws it
      stair_steps = draws.integers(3, 5);
      original_y = y;
      for (int64_t s = 0; s < stair_steps; ++s) {
        // Python multiplies the integers first, then by TERRAIN_STEP.
        const double x0 = x + static_cast<double>(s * stair_width) * S;
        const double x1 = x + static_cast<double>((1 + s) * stair_width) * S;
        const double y0 = y + static_cast<double>(s * stair_height) * S;
        const double y1 = y + static_cast<double>(-1 + s * stair_height) * S;
        out.obstacles.push_back({Point{x0, y0}, Point{x1, y0}, Point{x1, y1}, Point{x0, y1}});
      }
      counter = stair_steps * stair_width;
    } else if (state == kStairs && !oneshot) {
      const int64_t s = stair_steps * stair_width - counter - stair_height;
      const double n = static_cast<double>(s) / static_cast<double>(stair_width);
      y = original_y + (n * static_cast<double>(stair_height)) * S;
    }
    oneshot = false;
    out.y.push_back(y);
    counter -= 1;
    if (counter == 0) {
      counter = draws.integers(kTerrainGrass / 2, kTerrainGrass);
      state = (state == kGrass && hardcore) ? draws.integers(1, kStates) : kGrass;
      oneshot = true;
    }
  }
}

void generate_clouds(BipedalDraws& draws, Terrain& out) {
  out.clouds.clear();
  for (int c = 0; c < kClouds; ++c) {
    Cloud cloud;
    const double x = draws.uniform(0, kTerrainLength) * kTerrainStep;
    const double y = 400 / kScale * 3 / 4;
    for (int a = 0; a < 5; ++a) {
      // 3.14, not pi, as Gymnasium; x's draw comes before y's (Python evaluates the tuple in
      // order).
      const double px =
          x + 15 * kTerrainStep * std::sin(3.14 * 2 * a / 5) + draws.uniform(0, 5 * kTerrainStep);
      const double py =
          y + 5 * kTerrainStep * std::cos(3.14 * 2 * a / 5) + draws.uniform(0, 5 * kTerrainStep);
      cloud.poly[static_cast<size_t>(a)] = {px, py};
    }
    cloud.x1 = cloud.x2 = cloud.poly[0].x;
    for (const Point& p : cloud.poly) {
      cloud.x1 = std::min(cloud.x1, p.x);
      cloud.x2 = std::max(cloud.x2, p.x);
    }
    out.clouds.push_back(cloud);
  }
}

}  // namespace recur::envs::bipedal
