// Readers for the Gymnasium golden data of BipedalWalker (tests/data/box2d/bipedal_walker/,
// written by tests/data/box2d/bipedal_walker/generate.py), and a draw source that replays numpy's
// recorded draws and notes any call that differs from Gymnasium's (kind, bounds, order, count).
#pragma once

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "envs/box2d/bipedal_walker_physics.h"
#include "envs/box2d/bipedal_walker_terrain.h"
#include "tests/support/golden_text.h"

namespace bw_test {

using recur::test::numbers;

inline std::string data_path(const std::string& file) {
  const char* dir = std::getenv("RECUR_TEST_DATA_DIR");
  return std::string(dir && *dir ? dir : RECUR_TEST_DATA_DIR) + "/box2d/bipedal_walker/" + file;
}

// The parts of "tag a b | c d | e" after the tag, split at '|'.
inline std::vector<std::vector<double>> fields(const std::string& line) {
  std::vector<std::vector<double>> out;
  size_t start = line.find(' ') + 1;
  for (size_t bar; (bar = line.find('|', start)) != std::string::npos; start = bar + 1)
    out.push_back(numbers(line.substr(start, bar - start)));
  out.push_back(numbers(line.substr(start)));
  return out;
}

struct Draw {
  char kind = 'u';  // u uniform, i integers, r random
  double low = 0, high = 0, value = 0;
};

inline std::vector<Draw> parse_draws(const std::string& line) {
  std::istringstream in(line);
  std::string tag;
  size_t n = 0;
  in >> tag >> n;
  std::vector<Draw> out(n);
  for (Draw& d : out) {
    std::string kind;
    in >> kind >> d.low >> d.high >> d.value;
    d.kind = kind[0];
  }
  return out;
}

class ReplayDraws final : public recur::envs::bipedal::BipedalDraws {
 public:
  explicit ReplayDraws(std::vector<Draw> draws) : draws_(std::move(draws)) {}
  double uniform(double low, double high) override { return take('u', low, high); }
  int64_t integers(int64_t low, int64_t high) override {
    return static_cast<int64_t>(take('i', static_cast<double>(low), static_cast<double>(high)));
  }
  double random() override { return take('r', 0, 1); }

  size_t used() const { return next_; }
  size_t size() const { return draws_.size(); }
  // "" when every call so far matched Gymnasium's, else the first difference.
  const std::string& mismatch() const { return mismatch_; }

 private:
  double take(char kind, double low, double high) {
    if (next_ >= draws_.size()) {
      if (mismatch_.empty()) mismatch_ = "more draws than Gymnasium made";
      return low;
    }
    const Draw& d = draws_[next_++];
    if (mismatch_.empty() && (d.kind != kind || d.low != low || d.high != high)) {
      std::ostringstream m;
      m << "draw " << next_ - 1 << ": recur " << kind << "(" << low << ", " << high
        << "), Gymnasium " << d.kind << "(" << d.low << ", " << d.high << ")";
      mismatch_ = m.str();
    }
    return d.value;
  }
  std::vector<Draw> draws_;
  size_t next_ = 0;
  std::string mismatch_;
};

// Raw Box2D values recorded after a step: hull x y vx vy angle omega, joint angles (4), joint
// speeds (4), contacts (2), lidar fractions (10).
struct Raw {
  std::vector<double> v;
  recur::envs::bipedal::WalkerState state() const;
};

inline recur::envs::bipedal::WalkerState Raw::state() const {
  recur::envs::bipedal::WalkerState s;
  s.x = v[0];
  s.y = v[1];
  s.vx = v[2];
  s.vy = v[3];
  s.angle = v[4];
  s.omega = v[5];
  for (size_t k = 0; k < 4; ++k) {
    s.joint_angle[k] = v[6 + k];
    s.joint_speed[k] = v[10 + k];
  }
  s.contact = {v[14] != 0, v[15] != 0};
  for (size_t k = 0; k < 10; ++k) s.lidar[k] = v[16 + k];
  return s;
}

// One episode of short_horizon.txt.
struct Episode {
  bool hardcore = false;
  int seed = 0;
  std::string program;
  std::vector<Draw> draws;
  Raw reset_raw;
  std::vector<double> reset_obs;
  struct Step {
    std::vector<double> action;
    Raw raw;
    std::vector<double> obs;
    double reward = 0;
    bool terminated = false;
  };
  std::vector<Step> steps;
};

inline std::vector<Episode> read_short_horizon() {
  std::ifstream file(data_path("short_horizon.txt"));
  std::vector<Episode> out;
  for (std::string line; std::getline(file, line);) {
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("episode", 0) == 0) {
      std::istringstream in(line);
      std::string tag;
      Episode e;
      int hardcore = 0;
      in >> tag >> hardcore >> e.seed >> e.program;
      e.hardcore = hardcore != 0;
      out.push_back(e);
    } else if (line.rfind("draws", 0) == 0) {
      out.back().draws = parse_draws(line);
    } else if (line.rfind("reset", 0) == 0) {
      const auto f = fields(line);
      out.back().reset_raw.v = f[0];
      out.back().reset_obs = f[1];
    } else if (line.rfind("step", 0) == 0) {
      const auto f = fields(line);
      Episode::Step s;
      s.action = f[0];
      s.raw.v = f[1];
      s.obs = f[2];
      s.reward = f[3][0];
      s.terminated = f[3][1] != 0;
      out.back().steps.push_back(s);
    }
  }
  return out;
}

}  // namespace bw_test
