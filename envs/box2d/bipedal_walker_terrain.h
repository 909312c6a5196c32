// BipedalWalker's terrain, obstacles and clouds, generated as Gymnasium's _generate_terrain and
// _generate_clouds do (bipedal_walker.py), from a source of random draws.
//
// The draws come through BipedalDraws so that tests can replay the exact values numpy drew in
// Gymnasium (tests/data/box2d/bipedal_walker/terrain.txt) and check every kind, bound, order and
// count; in an env they come from recur's Rng (same distributions, not numpy's stream). All
// arithmetic is float64 in Python's operation order, so replayed draws give bit-identical
// terrain_y, obstacle and cloud coordinates.
//
// Draw order per reset (the env adds one more, the hull's push): terrain (per GRASS step after the
// start pad one uniform(-1, 1); per obstacle its size draws; per segment end integers(5, 10) and,
// hardcore, the next state integers(1, 4)), then 10 clouds x (uniform(0, 200) + 5 x 2 x
// uniform(0, 5 S)) = 110 draws although clouds are only drawn in pictures.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace recur {
class Rng;
}

namespace recur::envs::bipedal {

inline constexpr double kScale = 30.0;  // px per m (Gymnasium's SCALE)
inline constexpr double kTerrainStep = 14 / kScale;
inline constexpr int kTerrainLength = 200;  // points
inline constexpr double kTerrainHeight = 400 / kScale / 4;
inline constexpr int kTerrainGrass = 10;
inline constexpr int kTerrainStartpad = 20;
inline constexpr int kClouds = kTerrainLength / 20;

// numpy Generator calls BipedalWalker makes. integers' high is exclusive, as numpy's.
class BipedalDraws {
 public:
  virtual ~BipedalDraws() = default;
  virtual double uniform(double low, double high) = 0;
  virtual int64_t integers(int64_t low, int64_t high) = 0;
  virtual double random() = 0;  // uniform in [0, 1)
};

// The draws from recur's Rng.
class RngDraws final : public BipedalDraws {
 public:
  explicit RngDraws(Rng& rng) : rng_(rng) {}
  double uniform(double low, double high) override;
  int64_t integers(int64_t low, int64_t high) override;
  double random() override;

 private:
  Rng& rng_;
};

struct Point {
  double x = 0, y = 0;
};

// A static obstacle polygon (stump, stair step or pit wall), vertices as Gymnasium lists them.
using Obstacle = std::array<Point, 4>;

struct Cloud {
  std::array<Point, 5> poly;
  double x1 = 0, x2 = 0;  // min and max x of poly (Gymnasium culls clouds with them)
};

struct Terrain {
  std::vector<double> x, y;         // kTerrainLength points; x[i] = i * kTerrainStep
  std::vector<Obstacle> obstacles;  // in creation order
  std::vector<Cloud> clouds;        // kClouds
};

// Fills `out` (reusing its storage) from `draws`: terrain and obstacles, then clouds.
void generate_terrain(bool hardcore, BipedalDraws& draws, Terrain& out);
void generate_clouds(BipedalDraws& draws, Terrain& out);

}  // namespace recur::envs::bipedal
