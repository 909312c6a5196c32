// algo.bptt_steps: a rollout cut into shorter training sequences. The cut is a pure re-indexing,
// and each sequence starts from the state the actor held at its first step, so the learner
// replays exactly what the actor computed: its log-probs of the cut sequences equal the actor's.
#include "agent/ppo/bptt.h"

#include <doctest/doctest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "agent/actor_loop.h"
#include "agent/ppo/engine.h"
#include "agent/ppo/trainer.h"
#include "core/error.h"

using namespace recur;

TEST_CASE("bptt: the cut re-indexes (T, N) as (b, N * T / b) and takes the chunk states") {
  agent::Rollout r;
  r.state_every = 2;
  r.resize(/*T=*/4, /*N=*/3, /*obs=*/2, /*act=*/1, /*state=*/2);
  std::iota(r.obs.begin(), r.obs.end(), 0.0f);                // obs[t, n, k] = 6t + 2n + k
  std::iota(r.log_probs.begin(), r.log_probs.end(), 100.0f);  // 100 + 3t + n
  std::iota(r.chunk_states.begin(), r.chunk_states.end(), 0.0f);
  for (size_t i = 0; i < r.episode_start.size(); ++i) r.episode_start[i] = i % 5 == 0;
  r.has_reset_steps = true;
  agent::Rollout out;
  agent::cut_into_sequences(r, 2, out);
  CHECK(out.T == 2);
  CHECK(out.N == 6);
  CHECK(out.has_reset_steps);
  for (int j = 0; j < 2; ++j)
    for (int n = 0; n < 3; ++n)
      for (int t = 0; t < 2; ++t) {
        const size_t src = static_cast<size_t>(j * 2 + t) * 3 + n;
        const size_t dst = static_cast<size_t>(t) * 6 + j * 3 + n;
        CHECK(out.log_probs[dst] == r.log_probs[src]);
        CHECK(out.episode_start[dst] == r.episode_start[src]);
        for (int k = 0; k < 2; ++k) CHECK(out.obs[dst * 2 + k] == r.obs[src * 2 + k]);
      }
  // Sequence j * N + n starts from chunk j's state of env n.
  for (size_t i = 0; i < out.initial_state.size(); ++i) CHECK(out.initial_state[i] == i);
  // A rollout that stored no chunk states is refused, not trained on zeros.
  agent::Rollout plain;
  plain.resize(4, 3, 2, 1, 2);
  CHECK_THROWS_WITH_AS(agent::cut_into_sequences(plain, 2, out),
                       doctest::Contains("algo.bptt_steps = 2"), Error);
}

namespace {

// The largest |learner log-prob - actor log-prob| over every step of the cut sequences.
double replay_error(const policy::PolicySpec& spec, const policy::TensorMap& params,
                    const agent::Rollout& cut) {
  auto engine = agent::make_host_ppo_engine(spec, policy::Placement{}, 1e-5f);
  engine->load(params);
  engine->begin_update(cut);
  std::vector<int> columns(static_cast<size_t>(cut.N));
  std::iota(columns.begin(), columns.end(), 0);
  std::vector<float> logp(static_cast<size_t>(cut.T) * cut.N);
  engine->log_probs(columns, logp, {});
  double worst = 0;
  for (size_t i = 0; i < logp.size(); ++i)
    worst = std::max(worst, std::abs(static_cast<double>(logp[i]) - cut.log_probs[i]));
  return worst;
}

}  // namespace

TEST_CASE("bptt: sequences start from the actor's stored states, so the learner replays it") {
  agent::PolicyConfig pc;
  pc.hidden = 8;
  pc.encoder = {8};
  pc.actor_gain = 1.0f;
  // Episodes of 9 steps: with T 12 cut into 3 sequences of 4, episode starts fall inside
  // sequences and at their first steps, and sequences start mid-episode with non-zero states.
  envs::VectorEnv venv("CartPoleNoVel-v1", 3, Options{}.set("max_episode_steps", "9"));
  const auto spec =
      agent::make_policy_spec(pc, venv.single_observation_space(), venv.single_action_space());
  Rng rng(3);
  const auto params = policy::init_policy(spec, rng);
  policy::PolicyActor actor(spec, 3);
  actor.load(params);
  venv.reset(5);
  agent::ActorLoop loop(venv, actor, 11, /*normalize_obs=*/false);
  agent::Rollout r;
  r.state_every = 4;
  agent::Rollout cut;
  for (int rollout = 0; rollout < 2; ++rollout) {  // the second starts mid-episode
    loop.collect(12, r, {});
    REQUIRE(r.chunk_states.size() == static_cast<size_t>(3) * 3 * spec.state_size());
    agent::cut_into_sequences(r, 4, cut);
    CHECK(replay_error(spec, params, cut) < 1e-5);
  }
  // The control: the same sequences from zero states are not what the actor computed.
  std::fill(cut.initial_state.begin(), cut.initial_state.end(), 0.0f);
  CHECK(replay_error(spec, params, cut) > 1e-3);
}
