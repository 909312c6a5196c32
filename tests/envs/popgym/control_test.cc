// POPGym's control tasks (envs/popgym/control_*.h) against the classic envs they are built on,
// and their POPGym rules: observation slices, rewards, limits, noise, state and options.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "core/error.h"
#include "envs/popgym/control_pendulum.h"
#include "envs/registry.h"

namespace {
using recur::envs::make;

std::vector<double> state_of(const recur::envs::Env& env) {
  std::vector<double> s(static_cast<size_t>(env.state_size()));
  env.get_state(s);
  return s;
}

// Keeps CartPole upright from its true state (a linear controller, good for 600+ steps).
float balance(const std::vector<double>& s) {
  return s[2] + 0.5 * s[3] + 0.01 * s[0] + 0.1 * s[1] > 0 ? 1.0f : 0.0f;
}

struct Level {
  const char* suffix;
  int cartpole_steps, pendulum_steps;
  double sigma;
};
constexpr Level kLevels[] = {
    {"Easy", 200, 200, 0.1}, {"Medium", 400, 150, 0.2}, {"Hard", 600, 100, 0.3}};
}  // namespace

TEST_CASE("POPGym control: every difficulty is registered with POPGym's length and spaces") {
  for (const Level& l : kLevels) {
    CAPTURE(l.suffix);
    const std::string s = l.suffix;
    CHECK(make("PositionOnlyCartPole" + s + "-v0")->max_episode_steps() == l.cartpole_steps);
    CHECK(make("VelocityOnlyCartPole" + s + "-v0")->max_episode_steps() == l.cartpole_steps);
    CHECK(make("NoisyPositionOnlyCartPole" + s + "-v0")->max_episode_steps() == 200);
    CHECK(make("PositionOnlyPendulum" + s + "-v0")->max_episode_steps() == l.pendulum_steps);
    CHECK(make("NoisyPositionOnlyPendulum" + s + "-v0")->max_episode_steps() == 200);
  }
  auto pos = make("PositionOnlyCartPoleEasy-v0");
  CHECK(pos->observation_space().high() == std::vector<float>{4.8f, 0.41887903f});
  CHECK(pos->action_space().n() == 2);
  auto vel = make("VelocityOnlyCartPoleEasy-v0");
  CHECK(std::isinf(vel->observation_space().high()[0]));
  auto pend = make("PositionOnlyPendulumEasy-v0");
  CHECK(pend->observation_space().high() == std::vector<float>{1.0f, 1.0f});
  CHECK(pend->action_space().high() == std::vector<float>{2.0f});
}

TEST_CASE("POPGym control: CartPole tasks slice CartPole-v1 and pay 1/L per step") {
  for (const Level& l : kLevels) {
    for (const char* task : {"PositionOnlyCartPole", "VelocityOnlyCartPole"}) {
      const std::string id = std::string(task) + l.suffix + "-v0";
      CAPTURE(id);
      const bool velocities = id.starts_with("Velocity");
      auto env = make(id);
      auto base = make("CartPole-v1", recur::Options{}.set("max_episode_steps", "0"));
      // The same seed draws the same start state; the reset observation shows positions in both.
      auto o = env->reset(3);
      auto b = base->reset(3);
      CHECK(o[0] == b[0]);
      CHECK(o[1] == b[2]);
      double total = 0;
      for (int t = 1;; ++t) {
        const float a[1] = {balance(state_of(*base))};
        const auto r = env->step(a);
        const auto rb = base->step(a);
        CHECK(r.obs[0] == rb.obs[velocities ? 1 : 0]);
        CHECK(r.obs[1] == rb.obs[velocities ? 3 : 2]);
        CHECK(r.reward == 1.0 / l.cartpole_steps);
        CHECK(r.terminated == rb.terminated);
        total += r.reward;
        if (r.done()) {
          // The balancing policy survives: truncated at L, POPGym's optimal return 1.
          CHECK(t == l.cartpole_steps);
          CHECK(r.truncated);
          CHECK_FALSE(r.terminated);
          break;
        }
      }
      CHECK(total == doctest::Approx(1.0).epsilon(1e-12));
    }
  }
}

TEST_CASE("POPGym control: pushing one way terminates early, not truncated") {
  auto env = make("PositionOnlyCartPoleHard-v0");
  env->reset(0);
  const float left[1] = {0.0f};
  int steps = 0;
  for (;;) {
    const auto r = env->step(left);
    ++steps;
    if (r.done()) {
      CHECK(r.terminated);
      CHECK_FALSE(r.truncated);
      break;
    }
  }
  CHECK(steps < 30);
  CHECK(env->episode_return() == doctest::Approx(steps / 600.0));
}

TEST_CASE("POPGym control: Pendulum tasks slice Pendulum-v1 and map its reward") {
  for (const Level& l : kLevels) {
    const std::string id = std::string("PositionOnlyPendulum") + l.suffix + "-v0";
    CAPTURE(id);
    auto env = make(id);
    auto base = make("Pendulum-v1", recur::Options{}.set("max_episode_steps", "0"));
    auto o = env->reset(11);
    auto b = base->reset(11);
    CHECK(o[0] == b[0]);
    CHECK(o[1] == b[1]);
    for (int t = 1;; ++t) {
      const float a[1] = {static_cast<float>(2.5 * std::sin(0.3 * t))};  // clipped beyond 2
      const auto r = env->step(a);
      const auto rb = base->step(a);
      CHECK(r.obs[0] == rb.obs[0]);
      CHECK(r.obs[1] == rb.obs[1]);
      CHECK(r.reward == ((rb.reward + 16.2736044 / 2) / (16.2736044 / 2)) / l.pendulum_steps);
      CHECK(std::abs(r.reward) <= 1.0 / l.pendulum_steps);
      CHECK_FALSE(r.terminated);
      if (r.done()) {
        CHECK(t == l.pendulum_steps);
        CHECK(r.truncated);
        break;
      }
    }
  }
}

TEST_CASE("POPGym control: known Pendulum states give known rewards") {
  auto env = make("PositionOnlyPendulumMedium-v0");
  env->reset(0);
  const float zero[1] = {0.0f};
  // Upright and still: cost 0, the best step reward 1/L.
  env->set_state(std::vector<double>{0.0, 0.0});
  CHECK(env->observation()[0] == 1.0f);
  CHECK(env->observation()[1] == 0.0f);
  CHECK(env->step(zero).reward == 1.0 / 150);
  // Hanging and still: cost pi^2.
  env->set_state(std::vector<double>{std::numbers::pi, 0.0});
  const double h = 16.2736044 / 2;
  CHECK(env->step(zero).reward == ((-std::numbers::pi * std::numbers::pi + h) / h) / 150);
  // The largest cost (angle pi, speed 8, torque 2) maps to -1/L.
  CHECK(recur::envs::PopgymPendulum::reward_transform(-16.2736044, 150) == -1.0 / 150);
}

TEST_CASE("POPGym control: VelocityOnlyCartPole's reset observation shows positions") {
  auto env = make("VelocityOnlyCartPoleMedium-v0");
  auto o = env->reset(5);
  auto s = state_of(*env);
  REQUIRE(s.size() == 5);
  CHECK(s[4] == 1.0);
  CHECK(o[0] == static_cast<float>(s[0]));
  CHECK(o[1] == static_cast<float>(s[2]));
  const float a[1] = {1.0f};
  auto r = env->step(a);
  s = state_of(*env);
  CHECK(s[4] == 0.0);
  CHECK(r.obs[0] == static_cast<float>(s[1]));
  CHECK(r.obs[1] == static_cast<float>(s[3]));
  // The flag is state: restoring the reset state shows positions again.
  s[4] = 1.0;
  env->set_state(s);
  CHECK(env->observation()[0] == static_cast<float>(s[0]));
}

TEST_CASE("POPGym control: noisy observations are the clean ones plus the state's noise") {
  for (const Level& l : kLevels) {
    for (const char* task : {"NoisyPositionOnlyCartPole", "NoisyPositionOnlyPendulum"}) {
      const std::string id = std::string(task) + l.suffix + "-v0";
      CAPTURE(id);
      const bool cart = id.find("CartPole") != std::string::npos;
      auto env = make(id);
      auto clean = make(cart ? "PositionOnlyCartPoleEasy-v0" : "PositionOnlyPendulumEasy-v0");
      const auto& low = env->observation_space().low();
      const auto& high = env->observation_space().high();
      std::vector<float> noise;  // every current draw, for the moments below
      for (uint64_t ep = 0; ep < 20; ++ep) {
        env->reset(ep);
        clean->reset(0);
        for (int t = 0;; ++t) {
          const auto s = state_of(*env);
          const size_t n = cart ? 4 : 2;  // physics first, then noise now (2) and next (2)
          REQUIRE(s.size() == n + 4);
          clean->set_state(std::vector<double>(s.begin(), s.begin() + static_cast<long>(n)));
          for (size_t i = 0; i < 2; ++i) {
            const float want = std::min(
                std::max(clean->observation()[i] + static_cast<float>(s[n + i]), low[i]), high[i]);
            CHECK(env->observation()[i] == want);
            noise.push_back(static_cast<float>(s[n + i]));
          }
          const float a[1] = {cart ? balance(s) : 1.0f};
          if (env->step(a).done()) break;
        }
      }
      // Moments of N(0, sigma) over ~8000 draws: the mean within 5 standard errors of 0, the
      // standard deviation within 5%.
      double sum = 0, sq = 0;
      for (float v : noise) sum += v;
      const double mean = sum / static_cast<double>(noise.size());
      for (float v : noise) sq += (v - mean) * (v - mean);
      const double sd = std::sqrt(sq / static_cast<double>(noise.size() - 1));
      CHECK(std::abs(mean) < 5 * l.sigma / std::sqrt(static_cast<double>(noise.size())));
      CHECK(sd == doctest::Approx(l.sigma).epsilon(0.05));
    }
  }
}

TEST_CASE("POPGym control: state round trips and replays, bad states are rejected") {
  for (const char* id : {"PositionOnlyCartPoleEasy-v0", "VelocityOnlyCartPoleEasy-v0",
                         "NoisyPositionOnlyCartPoleHard-v0", "PositionOnlyPendulumHard-v0",
                         "NoisyPositionOnlyPendulumHard-v0"}) {
    CAPTURE(id);
    auto env = make(id);
    auto twin = make(id);
    env->reset(1);
    twin->reset(2);
    const float a[1] = {1.0f};
    env->step(a);
    const auto s = state_of(*env);
    twin->set_state(s);
    CHECK(state_of(*twin) == s);
    CHECK(std::vector<float>(twin->observation().begin(), twin->observation().end()) ==
          std::vector<float>(env->observation().begin(), env->observation().end()));
    // The next noise is state too: both take the same step.
    const auto r1 = env->step(a);
    const std::vector<float> o1(r1.obs.begin(), r1.obs.end());
    const auto r2 = twin->step(a);
    CHECK(std::vector<float>(r2.obs.begin(), r2.obs.end()) == o1);
    CHECK(r2.reward == r1.reward);

    const auto before = state_of(*twin);
    for (size_t i = 0; i < s.size(); ++i) {
      auto bad = s;
      bad[i] = std::nan("");
      CHECK_THROWS_AS(twin->set_state(bad), std::invalid_argument);
    }
    CHECK(state_of(*twin) == before);  // a rejected state changes nothing
    CHECK_THROWS_AS(twin->set_state(std::vector<double>(s.size() + 1, 0.0)), std::invalid_argument);
  }
  auto vel = make("VelocityOnlyCartPoleEasy-v0");
  vel->reset(0);
  CHECK_THROWS_WITH_AS(vel->set_state(std::vector<double>{0, 0, 0, 0, 0.5}),
                       doctest::Contains("must be 1 (reset observation) or 0"),
                       std::invalid_argument);
  auto noisy = make("NoisyPositionOnlyPendulumEasy-v0");
  noisy->reset(0);
  CHECK_THROWS_WITH_AS(noisy->set_state(std::vector<double>{0, 0, 0, 1e300, 0, 0}),
                       doctest::Contains("not a finite float32"), std::invalid_argument);
}

TEST_CASE("POPGym control: options") {
  using recur::Options;
  auto longer = make("PositionOnlyCartPoleEasy-v0", Options{}.set("max_episode_steps", "300"));
  CHECK(longer->max_episode_steps() == 300);
  longer->reset(0);
  const float a[1] = {0.0f};
  CHECK(longer->step(a).reward == 1.0 / 300);
  // POPGym's name is accepted when it agrees with the time limit.
  auto same = make("PositionOnlyPendulumEasy-v0",
                   Options{}.set("max_episode_steps", "50").set("max_episode_length", "50"));
  CHECK(same->max_episode_steps() == 50);
  CHECK_THROWS_WITH_AS(
      make("PositionOnlyPendulumEasy-v0", Options{}.set("max_episode_length", "50")),
      doctest::Contains("give max_episode_steps=50"), recur::Error);
  // No limit in recur (an outer TimeLimit applies, as gymnasium.make does): the reward stays
  // POPGym's 1/length of the registered length, and the env does not truncate itself.
  auto unlimited = make("VelocityOnlyCartPoleHard-v0", Options{}.set("max_episode_steps", "0"));
  CHECK(unlimited->max_episode_steps() == 0);
  unlimited->reset(0);
  CHECK(unlimited->step(a).reward == 1.0 / 600);
  CHECK_THROWS_WITH_AS(
      make("VelocityOnlyCartPoleHard-v0", Options{}.set("max_episode_length", "0")),
      doctest::Contains("give max_episode_steps=0"), recur::Error);
  auto quieter = make("NoisyPositionOnlyCartPoleEasy-v0", Options{}.set("noise_sigma", "0"));
  auto o = quieter->reset(4);
  const auto s = state_of(*quieter);
  CHECK(o[0] == static_cast<float>(s[0]));  // sigma 0: no noise
  CHECK_THROWS_WITH_AS(
      make("NoisyPositionOnlyPendulumMedium-v0", Options{}.set("noise_sigma", "-0.1")),
      doctest::Contains("noise_sigma = -0.1"), recur::Error);
  // Only the noisy tasks take noise_sigma.
  CHECK_THROWS_AS(make("PositionOnlyPendulumMedium-v0", Options{}.set("noise_sigma", "0.1")),
                  recur::Error);
}

TEST_CASE("POPGym control: extreme and out-of-range torques do not break the pendulum") {
  auto env = make("NoisyPositionOnlyPendulumHard-v0");
  env->reset(7);
  for (float u : {-1e30f, -2.0f, 0.0f, 2.0f, 1e30f}) {
    const float a[1] = {u};
    const auto r = env->step(a);
    CHECK(env->observation_space().contains(r.obs));
    CHECK(std::isfinite(r.reward));
  }
}
