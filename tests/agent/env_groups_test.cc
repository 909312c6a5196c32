// Double-buffered env groups (env.groups: 2): the envs are stepped half at a time while the policy
// acts on the other half. What must hold: every piece gives what the one-group path gives. A
// VectorEnv stepped range by range in the background equals one step() bit for bit; the grouped
// actor computes the one-group actor's actions, and its values, log-probs and states up to the
// rounding of GEMMs over fewer rows (1 ulp, measured); and with normalization off a grouped
// rollout is the one-group rollout: the same random draws, actions, observations, rewards,
// flags and episode ends, the same values and states up to that rounding.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "agent/actor_loop.h"
#include "agent/ppo/trainer.h"

using namespace recur;

namespace {

policy::PolicySpec small_spec(const envs::VectorEnv& venv, const std::string& core, bool shared) {
  agent::PolicyConfig pc;
  pc.hidden = 8;
  pc.encoder = {8};
  pc.core = core;
  pc.shared_core = shared;
  pc.actor_gain = 1.0f;
  return agent::make_policy_spec(pc, venv.single_observation_space(), venv.single_action_space());
}

template <typename T>
void check_equal(const T& a, const T& b, const std::string& what) {
  CAPTURE(what);
  REQUIRE(a.size() == b.size());
  size_t differ = 0;
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    differ += a[i] != b[i];
    worst = std::max(worst, std::abs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
  }
  CAPTURE(worst);
  CHECK(differ == 0);
}

// Floats computed through GEMMs of other row counts: equal up to rounding.
template <typename T>
void check_close(const T& a, const T& b, const std::string& what) {
  CAPTURE(what);
  REQUIRE(a.size() == b.size());
  size_t differ = 0;
  for (size_t i = 0; i < a.size(); ++i)
    differ += std::abs(a[i] - b[i]) > 1e-5f * (1.0f + std::abs(a[i]));
  CHECK(differ == 0);
}

void check_same_rollout(const agent::Rollout& a, const agent::Rollout& b) {
  REQUIRE(a.T == b.T);
  REQUIRE(a.N == b.N);
  check_equal(a.obs, b.obs, "obs");
  check_equal(a.actions, b.actions, "actions");
  check_close(a.log_probs, b.log_probs, "log_probs");
  check_close(a.values, b.values, "values");
  check_equal(a.rewards, b.rewards, "rewards");
  check_equal(a.episode_start, b.episode_start, "episode_start");
  check_equal(a.terminated, b.terminated, "terminated");
  check_equal(a.truncated, b.truncated, "truncated");
  check_close(a.bootstrap_values, b.bootstrap_values, "bootstrap_values");
  check_close(a.initial_state, b.initial_state, "initial_state");
  check_close(a.chunk_states, b.chunk_states, "chunk_states");
  check_close(a.last_values, b.last_values, "last_values");
}

}  // namespace

TEST_CASE("env groups: a VectorEnv stepped range by range in the background equals step()") {
  for (const std::string id : {"CartPole-v1", "LunarLander-v3"}) {
    for (int threads : {1, 2, 3}) {
      CAPTURE(id);
      CAPTURE(threads);
      const int N = 7;
      envs::VectorEnv whole(id, N, Options{}.set("max_episode_steps", "20"), threads);
      envs::VectorEnv halves(id, N, Options{}.set("max_episode_steps", "20"), threads);
      whole.reset(5);
      halves.reset(5);
      std::vector<float> actions(static_cast<size_t>(N) * whole.action_dim(), 0.0f);
      Rng rng(3);
      for (int t = 0; t < 60; ++t) {
        for (auto& a : actions)
          a = static_cast<float>(rng.uniform_int(whole.single_action_space().n()));
        whole.step(actions);
        halves.start_step_range(0, 3, actions);
        CHECK(halves.stepping());
        halves.finish_step();
        halves.start_step_range(3, N, actions);
        halves.finish_step();
        CHECK_FALSE(halves.stepping());
        check_equal(whole.obs(), halves.obs(), "obs");
        check_equal(whole.rewards(), halves.rewards(), "rewards");
        check_equal(whole.episode_start(), halves.episode_start(), "episode_start");
        check_equal(whole.terminated(), halves.terminated(), "terminated");
        check_equal(whole.truncated(), halves.truncated(), "truncated");
        check_equal(whole.final_return(), halves.final_return(), "final_return");
      }
      // A bad action in the range is refused before anything steps or is left in flight.
      const auto before = std::vector<float>(halves.obs().begin(), halves.obs().end());
      actions[4] = 99.0f;
      CHECK_THROWS_WITH_AS(halves.start_step_range(3, N, actions), doctest::Contains("env index 4"),
                           std::invalid_argument);
      CHECK_FALSE(halves.stepping());
      check_equal(std::span<const float>(before), halves.obs(), "obs after a refused step");
      // A bad action outside the range does not matter to it.
      halves.start_step_range(0, 3, actions);
      CHECK_THROWS_AS(halves.step(actions), Error);  // one step at a time
      CHECK_THROWS_AS(halves.start_step_range(3, N, actions), Error);
      CHECK_THROWS_AS(halves.reset(1), Error);
      CHECK_THROWS_AS(static_cast<void>(halves.snapshot()), Error);
      halves.finish_step();
    }
  }
}

TEST_CASE("env groups: a grouped actor computes what the one-group actor computes") {
  envs::VectorEnv venv("CartPole-v1", 5);
  for (const char* core : {"lstm", "gru", "mingru_highway"}) {
    for (bool shared : {false, true}) {
      CAPTURE(core);
      CAPTURE(shared);
      const auto spec = small_spec(venv, core, shared);
      Rng init(7);
      const auto params = policy::init_policy(spec, init);
      policy::PolicyActor one(spec, 5), two(spec, 5, {}, 2);
      CHECK(two.groups() == 2);
      CHECK(two.group_begin(1) == 2);
      one.load(params);
      two.load(params);
      // Non-zero states to begin with, the same in both.
      std::vector<float> states(5 * static_cast<size_t>(spec.state_size()));
      for (size_t i = 0; i < states.size(); ++i)
        states[i] = 0.1f * static_cast<float>(i % 7) - 0.3f;
      one.set_states(states);
      two.set_states(states);
      Rng r1(11), r2(11), obs_rng(2);
      std::vector<float> obs(5 * 4), a1(5), a2(5), l1(5), l2(5), v1(5), v2(5);
      for (int t = 0; t < 6; ++t) {
        for (auto& o : obs) o = static_cast<float>(obs_rng.normal());
        const std::vector<uint8_t> starts = {uint8_t(t == 2), 0, uint8_t(t == 3), 0, 1};
        one.act(obs, starts, r1, false, a1, l1, v1);
        if (t % 2 == 0) {
          two.act(obs, starts, r2, false, a2, l2, v2);  // the groups in turn
        } else {
          two.act_group(0, std::span(obs).first(8), std::span(starts).first(2), r2, false,
                        std::span(a2).first(2), std::span(l2).first(2), std::span(v2).first(2));
          two.act_group(1, std::span(obs).subspan(8), std::span(starts).subspan(2), r2, false,
                        std::span(a2).subspan(2), std::span(l2).subspan(2),
                        std::span(v2).subspan(2));
        }
        check_equal(a1, a2, "actions");
        check_close(l1, l2, "log_probs");
        check_close(v1, v2, "values");
        check_equal(one.normalized_obs(), two.normalized_obs(), "normalized obs");
        one.peek_values(obs, starts, v1);
        two.peek_group(1, std::span(obs).subspan(8), std::span(starts).subspan(2),
                       std::span(v2).subspan(2));
        two.peek_group(0, std::span(obs).first(8), std::span(starts).first(2),
                       std::span(v2).first(2));
        check_close(v1, v2, "peeked values");
      }
      std::vector<float> s1(states.size()), s2(states.size());
      one.get_states(s1);
      two.get_states(s2);
      check_close(s1, s2, "states");
      one.reset(3);
      two.reset(3);
      one.get_states(s1);
      two.get_states(s2);
      check_close(s1, s2, "states after reset(3)");
      const auto S = static_cast<size_t>(spec.state_size());
      for (size_t i = 3 * S; i < 4 * S; ++i) CHECK(s2[i] == 0.0f);
    }
  }
  policy::PolicySpec spec = small_spec(venv, "lstm", false);
  CHECK_THROWS_AS(policy::PolicyActor(spec, 2, {}, 3), std::invalid_argument);
}

TEST_CASE("env groups: with normalization off a grouped rollout is the one-group rollout") {
  // Truncations (max_episode_steps 9: bootstrap values), terminations, stored chunk states.
  for (int threads : {1, 2}) {
    for (int N : {6, 7}) {
      CAPTURE(threads);
      CAPTURE(N);
      const Options options = Options{}.set("max_episode_steps", "9");
      envs::VectorEnv v1("CartPoleNoVel-v1", N, options, threads);
      envs::VectorEnv v2("CartPoleNoVel-v1", N, options, threads);
      const auto spec = small_spec(v1, "lstm", false);
      Rng init(3);
      const auto params = policy::init_policy(spec, init);
      policy::PolicyActor one(spec, N), two(spec, N, {}, 2);
      one.load(params);
      two.load(params);
      v1.reset(9);
      v2.reset(9);
      agent::ActorLoop l1(v1, one, 4, false), l2(v2, two, 4, false);
      agent::Rollout r1, r2;
      r1.state_every = r2.state_every = 4;
      std::vector<agent::EpisodeEnd> e1, e2;
      for (int k = 0; k < 3; ++k) {
        l1.collect(12, r1, [&](const agent::EpisodeEnd& e) { e1.push_back(e); });
        l2.collect(12, r2, [&](const agent::EpisodeEnd& e) { e2.push_back(e); });
        check_same_rollout(r1, r2);
      }
      REQUIRE(e1.size() == e2.size());
      CHECK(e1.size() >= static_cast<size_t>(N) * 3);
      for (size_t i = 0; i < e1.size(); ++i) {
        CHECK(e1[i].env_index == e2[i].env_index);
        CHECK(e1[i].episode_return == e2[i].episode_return);
        CHECK(e1[i].length == e2[i].length);
      }
      CHECK(l1.env_steps() == l2.env_steps());
      int truncated = 0;
      for (uint8_t x : r1.truncated) truncated += x;
      CHECK(truncated > 0);
    }
  }
}

TEST_CASE("env groups: with normalization on, every observation enters the statistics once") {
  const int N = 8, T = 16;
  envs::VectorEnv venv("LunarLander-v3", N, {}, 2);
  const auto spec = small_spec(venv, "gru", true);
  Rng init(3);
  const auto params = policy::init_policy(spec, init);
  policy::PolicyActor two(spec, N, {}, 2);
  two.load(params);
  venv.reset(1);
  agent::ActorLoop loop(venv, two, 4, true);
  loop.reward_normalizer().enabled = true;
  agent::Rollout r;
  const double prior = two.normalizer().count();
  loop.collect(T, r, {});
  loop.collect(T, r, {});
  // Each group's rows enter as the group acts (obs) and steps (rewards): N * T samples a rollout.
  CHECK(two.normalizer().count() == doctest::Approx(prior + 2.0 * N * T));
  CHECK(loop.reward_normalizer().count == doctest::Approx(2.0 * N * T).epsilon(1e-6));
  // The stored observations are those the policy acted on: normalized with the statistics of
  // that moment, so within the clip, and not the raw ones.
  double raw_gap = 0;
  for (size_t i = 0; i < r.obs.size(); ++i) {
    CHECK(std::abs(r.obs[i]) <= 10.0f);
    raw_gap = std::max(raw_gap, static_cast<double>(std::abs(r.obs[i])));
  }
  CHECK(raw_gap > 0.5);  // not all near zero: they were normalized, not zeroed
  for (float x : r.rewards) CHECK(std::isfinite(x));
}

TEST_CASE("env groups: an error while the other group steps leaves no step in flight") {
  // A plugin-like env whose observation turns NaN: the check on group B's rows throws while
  // group A steps on the worker; the loop lets that step end before the error leaves.
  const int N = 4;
  envs::VectorEnv venv("CartPole-v1", N, {}, 2);
  const auto spec = small_spec(venv, "lstm", false);
  Rng init(3);
  policy::PolicyActor two(spec, N, {}, 2);
  two.load(policy::init_policy(spec, init));
  venv.reset(1);
  agent::ActorLoop loop(venv, two, 1, false);
  agent::Rollout r;
  loop.collect(4, r, {});
  // Poison env 3's state (group B) so that its next observation is NaN.
  auto snap = venv.snapshot();
  auto& state = snap.envs[3].state;
  REQUIRE(!state.empty());
  state[0] = std::numeric_limits<double>::quiet_NaN();
  venv.restore(snap);
  CHECK_THROWS_WITH_AS(loop.collect(4, r, {}), doctest::Contains("index 3"), Error);
  CHECK_FALSE(venv.stepping());
  venv.reset(2);  // usable again
}

TEST_CASE("env groups: a batch env that recur does not step refuses them") {
  // A BatchEnv that is not a VectorEnv (the Python env's case) cannot step half a batch.
  struct Wrapped final : envs::BatchEnv {
    envs::VectorEnv inner{"CartPole-v1", 4};
    int num_envs() const override { return 4; }
    const envs::Space& single_observation_space() const override {
      return inner.single_observation_space();
    }
    const envs::Space& single_action_space() const override { return inner.single_action_space(); }
    const std::string& id() const override { return inner.id(); }
    void reset(uint64_t seed) override { inner.reset(seed); }
    void step(std::span<const float> a) override { inner.step(a); }
    std::span<const float> obs() const override { return inner.obs(); }
    std::span<const float> rewards() const override { return inner.rewards(); }
    std::span<const uint8_t> terminated() const override { return inner.terminated(); }
    std::span<const uint8_t> truncated() const override { return inner.truncated(); }
    std::span<const uint8_t> episode_start() const override { return inner.episode_start(); }
    std::span<const float> final_obs() const override { return inner.final_obs(); }
    std::span<const double> final_return() const override { return inner.final_return(); }
    std::span<const int> final_length() const override { return inner.final_length(); }
  } env;
  const auto spec = small_spec(env.inner, "lstm", false);
  policy::PolicyActor two(spec, 4, {}, 2);
  CHECK_THROWS_WITH_AS(agent::ActorLoop(env, two, 1, false), doctest::Contains("env.groups: 1"),
                       Error);
}
