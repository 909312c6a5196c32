// The actor loop never lets recurrent state leak across episodes: at every episode start the
// value it records equals a fresh policy's value on the same observation from a zero state.
#include "agent/actor_loop.h"

#include <doctest/doctest.h>

#include <array>
#include <cmath>

#include "agent/ppo/trainer.h"

using namespace recur;

TEST_CASE("actor loop resets state at episode starts and stores initial states") {
  agent::PolicyConfig pc;
  pc.hidden = 8;
  pc.encoder = {8};
  pc.actor_gain = 1.0f;
  envs::VectorEnv venv("CartPole-v1", 3, Options{}.set("max_episode_steps", "5"));
  const auto spec =
      agent::make_policy_spec(pc, venv.single_observation_space(), venv.single_action_space());
  Rng rng(1);
  const auto params = policy::init_policy(spec, rng);
  policy::PolicyActor actor(spec, 3);
  actor.load(params);
  venv.reset(4);
  agent::ActorLoop loop(venv, actor, 4, /*normalize_obs=*/false);
  agent::Rollout r;
  int ended = 0;
  loop.collect(12, r, [&](const agent::EpisodeEnd&) { ++ended; });
  CHECK(ended >= 6);
  // The first unroll starts with zero state and all episode starts set.
  for (float s : r.initial_state) CHECK(s == 0.0f);
  for (int n = 0; n < 3; ++n) CHECK(r.episode_start[static_cast<size_t>(n)] == 1);
  int checked = 0;
  for (int t = 1; t < r.T; ++t) {
    for (int n = 0; n < r.N; ++n) {
      const size_t i = static_cast<size_t>(t) * r.N + n;
      const size_t prev = i - r.N;
      // episode_start follows the previous step's end (terminated or truncated).
      CHECK(r.episode_start[i] == (r.terminated[prev] || r.truncated[prev]));
      if (!r.episode_start[i]) continue;
      policy::PolicyActor fresh(spec, 1);
      fresh.load(params);
      const std::vector<uint8_t> start = {1};
      float a[1], lp[1], v[1];
      Rng unused(0);
      fresh.act(std::span(r.obs).subspan(i * spec.obs_dim, spec.obs_dim), start, unused, true, a,
                lp, v);
      CHECK(r.values[i] == doctest::Approx(v[0]).epsilon(1e-6));
      ++checked;
    }
  }
  CHECK(checked >= 6);
  // The second unroll stores the state the envs are in (non-zero somewhere).
  loop.collect(4, r, {});
  double sum = 0;
  for (float s : r.initial_state) sum += std::abs(s);
  CHECK(sum > 0);
}

namespace {

// A batch with Gymnasium's NEXT_STEP autoreset (as recur's Python adapter presents one,
// envs/batch_env.h): env 0's episodes end after 2 transitions and the step after is its reset
// step (action ignored, reward 0, transition 0); env 1 never ends. Logs what each step saw.
class NextStepBatch final : public envs::BatchEnv {
 public:
  int num_envs() const override { return 2; }
  const envs::Space& single_observation_space() const override { return obs_space_; }
  const envs::Space& single_action_space() const override { return action_space_; }
  const std::string& id() const override { return id_; }
  void reset(uint64_t) override {
    t_ = {0, 0};
    episode_ = {0, 0};
    resetting_ = {0, 0};
    obs_ = {first(0), first(1)};
    start_ = {1, 1};
    transition_ = {1, 1};
  }
  void step(std::span<const float>) override {
    for (size_t i = 0; i < 2; ++i) {
      // What the actor acted on, and whether the step is a transition.
      seen_obs.push_back(obs_[i]);
      seen_transition.push_back(resetting_[i] ? 0 : 1);
      term_[i] = 0;
      if (resetting_[i]) {
        resetting_[i] = 0;
        ++episode_[i];
        t_[i] = 0;
        obs_[i] = first(i);
        reward_[i] = 0;
        transition_[i] = 0;
        start_[i] = 1;
        continue;
      }
      ++t_[i];
      obs_[i] = first(i) + static_cast<float>(t_[i]);
      reward_[i] = i == 0 ? 1.0f + static_cast<float>(t_[i]) : 0.5f;
      return_[i] += reward_[i];
      transition_[i] = 1;
      start_[i] = 0;
      if (i == 0 && t_[i] == 2) {
        term_[i] = 1;
        final_obs_[i] = obs_[i];
        final_return_[i] = return_[i];
        final_length_[i] = t_[i];
        return_[i] = 0;
        resetting_[i] = 1;
      }
    }
  }
  std::span<const float> obs() const override { return obs_; }
  std::span<const float> rewards() const override { return reward_; }
  std::span<const uint8_t> terminated() const override { return term_; }
  std::span<const uint8_t> truncated() const override { return trunc_; }
  std::span<const uint8_t> episode_start() const override { return start_; }
  std::span<const float> final_obs() const override { return final_obs_; }
  std::span<const double> final_return() const override { return final_return_; }
  std::span<const int> final_length() const override { return final_length_; }
  std::span<const uint8_t> transition() const override { return transition_; }

  std::vector<float> seen_obs;
  std::vector<uint8_t> seen_transition;

 private:
  float first(size_t i) const { return i == 0 ? 10.0f * static_cast<float>(episode_[0]) : -3.0f; }
  envs::Space obs_space_ = envs::Space::box(-1000.0f, 1000.0f, {1});
  envs::Space action_space_ = envs::Space::discrete(2);
  std::string id_ = "NextStepBatch";
  std::array<int, 2> t_{}, episode_{}, final_length_{};
  std::array<uint8_t, 2> resetting_{}, term_{}, trunc_{}, start_{}, transition_{};
  std::array<float, 2> obs_{}, reward_{}, final_obs_{};
  std::array<double, 2> final_return_{}, return_{};
};

}  // namespace

TEST_CASE("actor loop: NEXT_STEP reset steps add nothing to the statistics or the episodes") {
  NextStepBatch venv;
  agent::PolicyConfig pc;
  pc.hidden = 4;
  pc.encoder = {};
  const auto spec =
      agent::make_policy_spec(pc, venv.single_observation_space(), venv.single_action_space());
  Rng rng(1);
  policy::PolicyActor actor(spec, 2);
  actor.load(policy::init_policy(spec, rng));
  venv.reset(0);
  agent::ActorLoop loop(venv, actor, 3, /*normalize_obs=*/true);
  auto& rn = loop.reward_normalizer();
  rn.enabled = true;
  rn.gamma = 0.5f;
  agent::Rollout r;
  std::vector<agent::EpisodeEnd> ends;
  const int T = 10;
  loop.collect(T, r, [&](const agent::EpisodeEnd& e) { ends.push_back(e); });
  // Env 0: transition, transition (ends), reset step, ...: 3 reset steps in 10 steps.
  REQUIRE(venv.seen_transition.size() == 2 * T);
  int transitions = 0;
  double obs_sum = 0, obs_sq = 0;
  for (size_t k = 0; k < venv.seen_obs.size(); ++k) {
    if (!venv.seen_transition[k]) continue;
    ++transitions;
    obs_sum += venv.seen_obs[k];
  }
  REQUIRE(transitions == 2 * T - 3);
  for (size_t k = 0; k < venv.seen_obs.size(); ++k)
    if (venv.seen_transition[k]) obs_sq += std::pow(venv.seen_obs[k] - obs_sum / transitions, 2);
  CHECK(r.has_reset_steps);
  // Observation statistics: exactly the observations of transitions (never a final one), on top
  // of the prior (count 1e-4 at mean 0, var 1).
  const auto& norm = actor.normalizer();
  const double prior = 1e-4, n = transitions;
  CHECK(norm.count() == doctest::Approx(prior + n).epsilon(1e-12));
  const double mean = obs_sum / (prior + n);
  CHECK(norm.mean()[0] == doctest::Approx(mean).epsilon(1e-9));
  const double var =
      (prior * 1.0 + obs_sq + (obs_sum / n) * (obs_sum / n) * prior * n / (prior + n)) /
      (prior + n);
  CHECK(norm.var()[0] == doctest::Approx(var).epsilon(1e-9));
  // Reward statistics: one sample per transition; the reset steps' zero rewards are not samples.
  CHECK(rn.count == doctest::Approx(prior + n).epsilon(1e-12));
  // Episodes: env 0 ended 3 times, each 2 transitions long with return 2 + 3, no reset step.
  REQUIRE(ends.size() == 3);
  for (const auto& e : ends) {
    CHECK(e.env_index == 0);
    CHECK(e.length == 2);
    CHECK(e.episode_return == 5.0);
  }
}
