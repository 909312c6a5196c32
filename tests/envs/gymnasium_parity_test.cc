// Parity with Gymnasium: replays tests/data/gymnasium/<id>.txt (written by
// tests/data/gymnasium/generate.py). For every recorded step, recur's env is put into Gymnasium's
// state before the step, given the same action, and must produce the same next state, observation,
// reward and flags. Tolerance 1e-6 relative to max(1, |value|): the float64 dynamics are ported
// operation for operation, so differences come only from libm vs numpy transcendental functions
// (ulp level) and, for MountainCarContinuous, from numpy's float32 intermediates (see its header).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "envs/registry.h"
#include "tests/support/golden_text.h"

namespace {

using recur::test::numbers;
using recur::test::split_bars;

double rel_err(double a, double b) {
  return std::abs(a - b) / std::max(1.0, std::abs(b));
}

struct Stats {
  int steps = 0, exact_states = 0, terminated = 0, truncated = 0;
  double max_err = 0;
};

void replay(const std::string& id) {
  // The data folder is compiled in; RECUR_TEST_DATA_DIR in the environment overrides it for a
  // test binary that runs elsewhere (the GPU machine's bundle, tools/gpu/bundle.sh).
  const char* dir = std::getenv("RECUR_TEST_DATA_DIR");
  const std::string path =
      std::string(dir && *dir ? dir : RECUR_TEST_DATA_DIR) + "/gymnasium/" + id + ".txt";
  std::ifstream file(path);
  REQUIRE_MESSAGE(file.good(),
                  "missing golden file " << path << " (tests/data/gymnasium/generate.py)");

  std::unique_ptr<recur::envs::Env> env;
  Stats stats;
  std::vector<double> state;
  int line_no = 0;
  for (std::string line; std::getline(file, line);) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    INFO(path << ":" << line_no);
    if (line.rfind("episode", 0) == 0) {
      recur::Options options;
      const std::string opts = line.substr(line.find("options ") + 8);
      if (opts != "-") {
        std::istringstream in(opts);
        for (std::string kv; std::getline(in, kv, ',');) {
          auto [k, v] = recur::parse_key_value(kv);
          options.set(k, v);
        }
      }
      env = recur::envs::make(id, options);
      state.resize(static_cast<size_t>(env->state_size()));
      continue;
    }
    const auto parts = split_bars(line.substr(line.find(' ') + 1));
    if (line.rfind("reset", 0) == 0) {
      REQUIRE(parts.size() == 2);
      env->reset(0);
      env->set_state(numbers(parts[0]));
      const auto obs = numbers(parts[1]);
      for (size_t i = 0; i < obs.size(); ++i)
        CHECK(env->observation()[i] == doctest::Approx(obs[i]).epsilon(1e-6));
      continue;
    }
    REQUIRE(parts.size() == 5);
    const auto action_d = numbers(parts[0]);
    const std::vector<float> action(action_d.begin(), action_d.end());
    env->set_state(numbers(parts[1]));
    const auto r = env->step(action);
    const auto want_state = numbers(parts[2]);
    const auto want_obs = numbers(parts[3]);
    const auto tail = numbers(parts[4]);
    env->get_state(state);
    bool exact = true;
    for (size_t i = 0; i < state.size(); ++i) {
      const double e = rel_err(state[i], want_state[i]);
      stats.max_err = std::max(stats.max_err, e);
      exact = exact && state[i] == want_state[i];
      CHECK_MESSAGE(e <= 1e-6, "state[" << i << "] " << state[i] << " vs " << want_state[i]);
    }
    for (size_t i = 0; i < want_obs.size(); ++i)
      CHECK_MESSAGE(rel_err(r.obs[i], want_obs[i]) <= 1e-6,
                    "obs[" << i << "] " << r.obs[i] << " vs " << want_obs[i]);
    CHECK(rel_err(r.reward, tail[0]) <= 1e-6);
    CHECK(r.terminated == (tail[1] != 0));
    CHECK(r.truncated == (tail[2] != 0));
    stats.steps++;
    stats.exact_states += exact;
    stats.terminated += r.terminated;
    stats.truncated += r.truncated;
  }
  CHECK(stats.steps > 100);
  CHECK(stats.terminated + stats.truncated >= 2);
  if (std::getenv("RECUR_TEST_VERBOSE"))
    std::printf(
        "%s: %d steps, %d bit-exact states, max rel err %.3g, %d terminated, %d truncated\n",
        id.c_str(), stats.steps, stats.exact_states, stats.max_err, stats.terminated,
        stats.truncated);
}

}  // namespace

TEST_CASE("CartPole-v1 matches Gymnasium") {
  replay("CartPole-v1");
}
TEST_CASE("Pendulum-v1 matches Gymnasium") {
  replay("Pendulum-v1");
}
TEST_CASE("MountainCar-v0 matches Gymnasium") {
  replay("MountainCar-v0");
}
TEST_CASE("MountainCarContinuous-v0 matches Gymnasium") {
  replay("MountainCarContinuous-v0");
}
TEST_CASE("Acrobot-v1 matches Gymnasium") {
  replay("Acrobot-v1");
}
