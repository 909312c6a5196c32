// The actor loop never lets recurrent state leak across episodes: at every episode start the
// value it records equals a fresh policy's value on the same observation from a zero state.
#include "agent/actor_loop.h"

#include <doctest/doctest.h>

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
