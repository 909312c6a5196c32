// The Env base class's bookkeeping and errors, on concrete envs.
#include "envs/env.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "envs/registry.h"

using recur::envs::make;

TEST_CASE(
    "truncation comes from the time limit and termination from the env and both can coincide") {
  // CartPole pushed right always falls at a known step; with the limit on that same step both
  // flags are set, as Gymnasium's TimeLimit does.
  auto probe = make("CartPole-v1");
  probe->reset(4);
  const float right[1] = {1};
  int fall = 0;
  for (;;) {
    ++fall;
    if (probe->step(right).terminated) break;
  }
  auto env = make("CartPole-v1", recur::Options{}.set("max_episode_steps", std::to_string(fall)));
  env->reset(4);
  recur::envs::StepResult r;
  for (int s = 0; s < fall; ++s) r = env->step(right);
  CHECK(r.terminated);
  CHECK(r.truncated);
  CHECK(env->needs_reset());
}

TEST_CASE("bad actions name the env and the value") {
  auto env = make("MountainCar-v0");
  env->reset(0);
  const float three[1] = {3};
  try {
    env->step(three);
    FAIL("no error");
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    CHECK(msg.find("MountainCar-v0") != std::string::npos);
    CHECK(msg.find("action 3") != std::string::npos);
    CHECK(msg.find("Discrete(3)") != std::string::npos);
  }
  auto pendulum = make("Pendulum-v1");
  pendulum->reset(0);
  const float inf[1] = {std::numeric_limits<float>::infinity()};
  CHECK_THROWS_AS(pendulum->step(inf), std::invalid_argument);
  const float two[2] = {0, 0};
  CHECK_THROWS_AS(pendulum->step(two), std::invalid_argument);
}

TEST_CASE("continuous actions are clipped where Gymnasium clips") {
  auto a = make("Pendulum-v1"), b = make("Pendulum-v1");
  a->reset(1);
  b->reset(1);
  const float big[1] = {50}, max[1] = {2};
  const auto ra = a->step(big);
  const std::vector<float> obs_a(ra.obs.begin(), ra.obs.end());
  const auto rb = b->step(max);
  CHECK(obs_a == std::vector<float>(rb.obs.begin(), rb.obs.end()));
  CHECK(ra.reward == rb.reward);  // Pendulum's cost uses the clipped torque

  // MountainCarContinuous clips the force but, as Gymnasium, charges the action as given.
  auto c = make("MountainCarContinuous-v0"), d = make("MountainCarContinuous-v0");
  c->reset(2);
  d->reset(2);
  const float three[1] = {3}, one[1] = {1};
  const auto rc = c->step(three);
  const std::vector<float> obs_c(rc.obs.begin(), rc.obs.end());
  const auto rd = d->step(one);
  CHECK(obs_c == std::vector<float>(rd.obs.begin(), rd.obs.end()));
  CHECK(rc.reward == doctest::Approx(-0.9));
  CHECK(rd.reward == doctest::Approx(-0.1));
}

TEST_CASE("reset without a seed continues the stream and the same seed repeats it") {
  auto env = make("CartPole-v1");
  const auto first = std::vector<float>(env->reset(5).begin(), env->reset(5).end());
  const auto second = std::vector<float>(env->reset().begin(), env->reset().end());
  CHECK(first != second);
  const auto again = env->reset(5);
  CHECK(first == std::vector<float>(again.begin(), again.end()));
}

TEST_CASE("reset distributions follow Gymnasium's ranges") {
  auto cart = make("CartPole-v1"), car = make("MountainCar-v0"), acro = make("Acrobot-v1");
  auto pend = make("Pendulum-v1");
  double mean_theta = 0;
  std::vector<double> s4(4), s2(2);
  const int n = 2000;
  for (int i = 0; i < n; ++i) {
    cart->reset(static_cast<uint64_t>(i));
    cart->get_state(s4);
    for (double v : s4) CHECK((v >= -0.05 && v < 0.05));
    car->reset(static_cast<uint64_t>(i));
    car->get_state(s2);
    CHECK((s2[0] >= -0.6 && s2[0] < -0.4 && s2[1] == 0));
    acro->reset(static_cast<uint64_t>(i));
    acro->get_state(s4);
    for (double v : s4)
      CHECK((std::abs(v) <= static_cast<double>(0.1f) &&
             v == static_cast<float>(v)));  // drawn f64, stored f32
    pend->reset(static_cast<uint64_t>(i));
    pend->get_state(s2);
    CHECK((std::abs(s2[0]) <= M_PI && std::abs(s2[1]) <= 1.0));
    mean_theta += s2[0] / n;
  }
  // Uniform on [-pi, pi): mean 0, standard error pi / sqrt(3 n) ~ 0.04.
  CHECK(std::abs(mean_theta) < 0.2);
}

namespace {
// An env whose state is not a flat vector (as a Box2D world): a counter the snapshot cannot hold.
class OpaqueCounter final : public recur::envs::Env {
 public:
  OpaqueCounter()
      : Env(recur::envs::Space::box(-1e9f, 1e9f, {1}), recur::envs::Space::discrete(2)) {}
  int resets = 0;
  double value = 0;
  std::vector<std::optional<uint64_t>> seeds;  // what each reset_impl was handed

 private:
  void reset_impl(recur::Rng& rng, std::optional<uint64_t> seed) override {
    ++resets;
    seeds.push_back(seed);
    value = rng.uniform(0.0, 1.0);
  }
  Outcome step_impl(std::span<const float>) override {
    value += 1;
    return {1.0, false};
  }
  void observe(std::span<float> obs) const override { obs[0] = static_cast<float>(value); }
};
// An env written against the older reset_impl(Rng&), without the seed.
class LegacyEnv final : public recur::envs::Env {
 public:
  LegacyEnv() : Env(recur::envs::Space::box(0.0f, 1.0f, {1}), recur::envs::Space::discrete(2)) {}
  double value = 0;

 private:
  void reset_impl(recur::Rng& rng) override { value = rng.uniform(0.0, 1.0); }
  Outcome step_impl(std::span<const float>) override { return {0.0, true}; }
  void observe(std::span<float> obs) const override { obs[0] = static_cast<float>(value); }
};

// An env that overrides neither form.
class NoResetEnv final : public recur::envs::Env {
 public:
  NoResetEnv() : Env(recur::envs::Space::box(0.0f, 1.0f, {1}), recur::envs::Space::discrete(2)) {}

 private:
  Outcome step_impl(std::span<const float>) override { return {0.0, true}; }
  void observe(std::span<float> obs) const override { obs[0] = 0; }
};
}  // namespace

TEST_CASE("reset(seed) hands the seed to reset_impl, reset() and restore() hand none") {
  OpaqueCounter env;
  env.reset(42);
  env.reset();
  env.reset(7);
  const float action = 0;
  env.step({&action, 1});
  OpaqueCounter copy;
  copy.restore(env.snapshot());  // restarts from the restored RNG: no seed
  REQUIRE(env.seeds.size() == 3);
  CHECK(env.seeds[0] == std::optional<uint64_t>(42));
  CHECK(env.seeds[1] == std::nullopt);
  CHECK(env.seeds[2] == std::optional<uint64_t>(7));
  REQUIRE(copy.seeds.size() == 1);
  CHECK(copy.seeds[0] == std::nullopt);
  // The rng was reseeded before reset_impl saw the seed: the same seed, the same episode.
  OpaqueCounter other;
  other.reset(7);
  env.reset(7);
  CHECK(env.value == other.value);

  // Wrappers pass it through (MaskVelocity forwards to the env it masks).
  auto masked = recur::envs::make("CartPoleNoVel-v1");
  auto plain = recur::envs::make("CartPole-v1");
  CHECK(masked->reset(5)[0] == plain->reset(5)[0]);

  // Envs written against reset_impl(Rng&) still work; one with neither form says so.
  LegacyEnv legacy, legacy2;
  CHECK(legacy.reset(3)[0] == legacy2.reset(3)[0]);
  NoResetEnv none;
  CHECK_THROWS_WITH(none.reset(1), doctest::Contains("overrides neither reset_impl"));
}

TEST_CASE("an env without a flat state restarts its episode on restore, from the restored RNG") {
  OpaqueCounter source;
  source.reset(7);
  const float action = 0;
  for (int i = 0; i < 3; ++i) source.step({&action, 1});
  const auto snap = source.snapshot();
  CHECK(snap.state.empty());
  CHECK(snap.elapsed_steps == 3);

  OpaqueCounter target;
  CHECK(target.restore(snap));  // restarted: the counter's value was not in the snapshot
  CHECK(target.resets == 1);
  CHECK(target.elapsed_steps() == 0);
  CHECK(target.episode_return() == 0);
  CHECK(target.episode_start());
  // The new episode comes from the snapshot's RNG: the source's next reset draws the same value.
  source.reset();
  CHECK(target.observation()[0] == source.observation()[0]);
  target.step({&action, 1});  // steppable, not a dead env

  // An ended episode (needs_reset) or an env never reset is restored as it was.
  OpaqueCounter fresh;
  CHECK_FALSE(fresh.restore(OpaqueCounter().snapshot()));
  CHECK(fresh.resets == 0);
}
