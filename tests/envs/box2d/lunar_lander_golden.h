// Reader of tests/data/box2d/lunar_lander/ (written by tests/data/box2d/lunar_lander/generate.py
// from Gymnasium): episodes with every RNG draw and, per step, the lander's Box2D body state, the
// observation, reward, flags and prev_shaping. The format is described in the file's header.
#pragma once

#include <doctest/doctest.h>

#include <array>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/options.h"
#include "envs/box2d/lunar_lander_sim.h"
#include "tests/support/golden_text.h"

namespace recur::test::lunar_lander {

namespace ll = recur::envs::lunar_lander;
using recur::test::numbers;
using recur::test::split_bars;

struct GoldenStep {
  std::vector<float> action;  // empty for the step inside reset
  double u0 = 0, u1 = 0;      // dispersion draws ~ U(-1, 1)
  ll::BodyState body;
  bool awake = true, game_over = false;
  std::array<double, 8> obs{};  // float32 values
  double reward = 0;
  bool terminated = false;
  double prev_shaping = 0;  // Gymnasium's prev_shaping after the step (= this step's shaping)
};

struct GoldenEpisode {
  std::string name;
  bool continuous = false;
  uint64_t seed = 0;
  Options options;
  ll::SimConfig config;
  ll::ResetDraws draws;
  std::vector<double> smooth_y;       // 11
  std::vector<double> edge_vertices;  // 11 fixtures x (x1 y1 x2 y2), float32 values
  std::vector<double> helipad;        // x1 x2 y
  GoldenStep reset;
  std::vector<GoldenStep> steps;
};

inline std::string data_dir() {
  const char* dir = std::getenv("RECUR_TEST_DATA_DIR");
  return std::string(dir && *dir ? dir : RECUR_TEST_DATA_DIR) + "/box2d/lunar_lander";
}

inline void read_body(const std::string& text, GoldenStep& s) {
  const auto b = numbers(text);
  REQUIRE(b.size() == 10);
  s.body = {b[0], b[1], b[2], b[3], b[4], b[5], {b[6] != 0, b[7] != 0}};
  s.awake = b[8] != 0;
  s.game_over = b[9] != 0;
}

inline void read_obs(const std::string& text, GoldenStep& s) {
  const auto o = numbers(text);
  REQUIRE(o.size() == 8);
  std::copy(o.begin(), o.end(), s.obs.begin());
}

inline std::vector<GoldenEpisode> read_trajectories() {
  const std::string path = data_dir() + "/trajectories.txt";
  std::ifstream file(path);
  REQUIRE_MESSAGE(file.good(),
                  "missing golden file " << path << " (tests/data/box2d/lunar_lander/generate.py)");
  std::vector<GoldenEpisode> episodes;
  for (std::string line; std::getline(file, line);) {
    if (line.empty() || line[0] == '#') continue;
    const std::string tag = line.substr(0, line.find(' '));
    const std::string rest = line.substr(tag.size() + 1);
    if (tag == "episode") {
      GoldenEpisode e;
      std::istringstream in(rest);
      std::string k, opts;
      int continuous = 0;
      in >> e.name >> k >> continuous >> k >> e.seed >> k >> opts;
      e.continuous = continuous != 0;
      e.config.continuous = e.continuous;
      if (opts != "-") {
        std::istringstream o(opts);
        for (std::string kv; std::getline(o, kv, ',');) {
          auto [key, value] = parse_key_value(kv);
          e.options.set(key, value);
          if (key == "gravity") e.config.gravity = std::strtod(value.c_str(), nullptr);
          if (key == "enable_wind") e.config.enable_wind = value == "true";
          if (key == "wind_power") e.config.wind_power = std::strtod(value.c_str(), nullptr);
          if (key == "turbulence_power")
            e.config.turbulence_power = std::strtod(value.c_str(), nullptr);
        }
      }
      episodes.push_back(std::move(e));
      continue;
    }
    REQUIRE(!episodes.empty());
    GoldenEpisode& e = episodes.back();
    const auto parts = split_bars(rest);
    if (tag == "heights") {
      const auto h = numbers(rest);
      REQUIRE(h.size() == 12);
      std::copy(h.begin(), h.end(), e.draws.heights.begin());
    } else if (tag == "force") {
      const auto f = numbers(rest);
      e.draws.force_x = f.at(0);
      e.draws.force_y = f.at(1);
    } else if (tag == "wind") {
      const auto w = numbers(rest);
      e.draws.wind_idx = static_cast<int>(w.at(0));
      e.draws.torque_idx = static_cast<int>(w.at(1));
    } else if (tag == "terrain") {
      REQUIRE(parts.size() == 3);
      e.smooth_y = numbers(parts[0]);
      e.edge_vertices = numbers(parts[1]);
      e.helipad = numbers(parts[2]);
    } else if (tag == "reset") {
      REQUIRE(parts.size() == 4);
      const auto u = numbers(parts[0]);
      e.reset.u0 = u.at(0);
      e.reset.u1 = u.at(1);
      read_body(parts[1], e.reset);
      read_obs(parts[2], e.reset);
      e.reset.prev_shaping = numbers(parts[3]).at(0);
    } else if (tag == "step") {
      REQUIRE(parts.size() == 6);
      GoldenStep s;
      const auto a = numbers(parts[0]);
      s.action.assign(a.begin(), a.end());
      const auto u = numbers(parts[1]);
      s.u0 = u.at(0);
      s.u1 = u.at(1);
      read_body(parts[2], s);
      read_obs(parts[3], s);
      const auto rt = numbers(parts[4]);
      s.reward = rt.at(0);
      s.terminated = rt.at(1) != 0;
      s.prev_shaping = numbers(parts[5]).at(0);
      e.steps.push_back(std::move(s));
    } else {
      FAIL("unknown line in " << path << ": " << line);
    }
  }
  return episodes;
}

}  // namespace recur::test::lunar_lander
