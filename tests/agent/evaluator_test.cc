// agent::evaluate_policy's stepping threads (EvalConfig::threads, run.eval_threads, recur eval
// --threads): the same episodes, returns and lengths for any count, deterministic or sampled, and
// an invalid count named.
#include <doctest/doctest.h>

#include <string>

#include "agent/algorithm.h"
#include "agent/config/config.h"
#include "agent/evaluator.h"
#include "core/error.h"
#include "core/rng.h"
#include "envs/registry.h"
#include "policy/policy_spec.h"

using namespace recur;

TEST_CASE("an evaluation's results do not depend on its stepping threads") {
  for (const char* env_id : {"LunarLander-v3", "PendulumNoVel-v1"}) {
    CAPTURE(env_id);
    agent::PolicyConfig pc;
    pc.encoder = {16};
    pc.hidden = 8;
    const auto env = envs::make(env_id);
    const policy::PolicySpec spec =
        agent::make_policy_spec(pc, env->observation_space(), env->action_space());
    Rng rng(5);
    const policy::TensorMap tensors = policy::init_policy(spec, rng);
    for (const bool deterministic : {true, false}) {
      CAPTURE(deterministic);
      agent::EvalConfig c;
      c.env_id = env_id;
      c.episodes = 11;  // 8 envs: three run a second episode
      c.num_envs = 8;
      c.seed = 77;
      c.deterministic = deterministic;
      const agent::EvalResult one = agent::evaluate_policy(spec, tensors, c);
      REQUIRE(one.returns.size() == 11);
      for (const int threads : {2, 3, 8, 20}) {
        CAPTURE(threads);
        c.threads = threads;
        const agent::EvalResult r = agent::evaluate_policy(spec, tensors, c);
        CHECK(r.returns == one.returns);
        CHECK(r.lengths == one.lengths);
      }
    }
  }
  agent::EvalConfig bad;
  bad.env_id = "CartPole-v1";
  bad.threads = 0;
  agent::PolicyConfig pc;
  const auto env = envs::make("CartPole-v1");
  const policy::PolicySpec spec =
      agent::make_policy_spec(pc, env->observation_space(), env->action_space());
  Rng rng(1);
  CHECK_THROWS_WITH_AS(agent::evaluate_policy(spec, policy::init_policy(spec, rng), bad),
                       doctest::Contains("at least 1 stepping thread"), Error);
}
