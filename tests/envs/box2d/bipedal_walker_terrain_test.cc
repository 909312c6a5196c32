// BipedalWalker terrain, obstacles and clouds (exact layer): recur replays the numpy draws that
// Gymnasium's reset(seed) made (tests/data/box2d/bipedal_walker/terrain.txt) and must make the
// same calls in the same order (kind and bounds of every draw, and their count: terrain, 110 cloud
// draws, then the hull's push) and build bit-identical terrain_y, cloud polygons and obstacles.
// Obstacles are compared as Gymnasium's Box2D holds them (float32, in its hull order) against
// recur's float64 vertices cast to float32, as vertex sets.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <utility>

#include "core/rng.h"
#include "envs/box2d/bipedal_walker_terrain.h"
#include "tests/envs/box2d/bipedal_walker_golden.h"

namespace bw = recur::envs::bipedal;
using bw_test::Draw;

namespace {

struct Case {
  bool hardcore = false;
  int seed = 0;
  std::vector<Draw> draws;
  std::vector<double> terrain_y;
  std::vector<std::vector<double>> obstacles;  // x0 y0 x1 y1 ... (float32 values)
  std::vector<std::vector<double>> clouds;     // x1 x2 then 5 (x, y)
};

std::vector<Case> read_cases() {
  std::ifstream file(bw_test::data_path("terrain.txt"));
  REQUIRE_MESSAGE(file.good(), "missing " << bw_test::data_path("terrain.txt"));
  std::vector<Case> out;
  for (std::string line; std::getline(file, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string tag;
    in >> tag;
    if (tag == "case") {
      Case c;
      int hardcore = 0;
      in >> hardcore >> c.seed;
      c.hardcore = hardcore != 0;
      out.push_back(c);
    } else if (tag == "draws") {
      out.back().draws = bw_test::parse_draws(line);
    } else if (tag == "terrain_y") {
      out.back().terrain_y = bw_test::fields(line)[0];
    } else if (tag == "obstacle") {
      out.back().obstacles.push_back(bw_test::fields(line)[0]);
    } else if (tag == "cloud") {
      out.back().clouds.push_back(bw_test::fields(line)[0]);
    }
  }
  return out;
}

std::vector<std::pair<float, float>> sorted_points(const std::vector<double>& xy) {
  std::vector<std::pair<float, float>> p;
  for (size_t k = 0; k + 1 < xy.size(); k += 2)
    p.emplace_back(static_cast<float>(xy[k]), static_cast<float>(xy[k + 1]));
  std::sort(p.begin(), p.end());
  return p;
}

}  // namespace

TEST_CASE("BipedalWalker terrain, obstacles and clouds equal Gymnasium's from its draws") {
  const auto cases = read_cases();
  REQUIRE(cases.size() == 9);
  int stumps = 0, stairs = 0, pits = 0;
  for (const Case& c : cases) {
    CAPTURE(c.hardcore);
    CAPTURE(c.seed);
    bw_test::ReplayDraws draws(c.draws);
    bw::Terrain t;
    bw::generate_terrain(c.hardcore, draws, t);
    bw::generate_clouds(draws, t);
    draws.uniform(-5, 5);  // the env's hull push comes last
    CHECK_MESSAGE(draws.mismatch().empty(), draws.mismatch());
    CHECK(draws.used() == draws.size());

    REQUIRE(t.x.size() == 200);
    REQUIRE(t.y.size() == 200);
    int exact = 0;
    for (size_t i = 0; i < 200; ++i) {
      CHECK(t.x[i] == static_cast<double>(i) * (14 / 30.0));
      exact += t.y[i] == c.terrain_y[i];
    }
    CHECK(exact == 200);

    REQUIRE(t.obstacles.size() == c.obstacles.size());
    for (size_t k = 0; k < t.obstacles.size(); ++k) {
      std::vector<double> mine;
      for (const bw::Point& p : t.obstacles[k]) {
        mine.push_back(p.x);
        mine.push_back(p.y);
      }
      CHECK(sorted_points(mine) == sorted_points(c.obstacles[k]));
    }

    REQUIRE(t.clouds.size() == c.clouds.size());
    for (size_t k = 0; k < t.clouds.size(); ++k) {
      const auto& want = c.clouds[k];
      CHECK(t.clouds[k].x1 == want[0]);
      CHECK(t.clouds[k].x2 == want[1]);
      for (size_t a = 0; a < 5; ++a) {
        CHECK(t.clouds[k].poly[a].x == want[2 + 2 * a]);
        CHECK(t.clouds[k].poly[a].y == want[3 + 2 * a]);
      }
    }

    // Which obstacles the draws made (integers(1, 4): 1 stump, 2 stairs, 3 pit).
    for (const Draw& d : c.draws)
      if (d.kind == 'i' && d.low == 1 && d.high == 4) {
        stumps += d.value == 1;
        stairs += d.value == 2;
        pits += d.value == 3;
      }
    if (!c.hardcore) CHECK(t.obstacles.empty());
  }
  // The hardcore seeds exercise every obstacle kind.
  CHECK(stumps > 0);
  CHECK(stairs > 0);
  CHECK(pits > 0);
}

TEST_CASE("BipedalWalker terrain from recur's Rng keeps Gymnasium's draw pattern") {
  // The same generator on recur's Rng: every draw lies in its distribution's range and the
  // terrain keeps Gymnasium's shape (a flat start pad, then heights near TERRAIN_HEIGHT).
  for (const bool hardcore : {false, true}) {
    recur::Rng rng(42);
    bw::RngDraws draws(rng);
    bw::Terrain t;
    bw::generate_terrain(hardcore, draws, t);
    bw::generate_clouds(draws, t);
    REQUIRE(t.y.size() == 200);
    REQUIRE(t.clouds.size() == 10);
    for (int i = 0; i <= 20; ++i) CHECK(t.y[static_cast<size_t>(i)] == bw::kTerrainHeight);
    if (!hardcore) {
      CHECK(t.obstacles.empty());
      for (double y : t.y) CHECK(std::abs(y - bw::kTerrainHeight) < 3);
    } else {
      CHECK(!t.obstacles.empty());
    }
    for (const bw::Cloud& c : t.clouds) {
      CHECK(c.x1 <= c.x2);
      for (const bw::Point& p : c.poly) CHECK(p.y > 8);
    }
  }
  // integers' high is exclusive, as numpy's.
  recur::Rng rng(7);
  bw::RngDraws draws(rng);
  bool saw_low = false, saw_high = false;
  for (int k = 0; k < 1000; ++k) {
    const int64_t v = draws.integers(3, 5);
    CHECK((v == 3 || v == 4));
    saw_low |= v == 3;
    saw_high |= v == 4;
  }
  CHECK((saw_low && saw_high));
}
