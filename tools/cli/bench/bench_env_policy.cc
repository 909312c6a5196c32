#include "tools/cli/bench/bench_env_policy.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <span>

#include "agent/policy_target.h"
#include "core/error.h"
#include "core/rng.h"
#include "envs/vector_env.h"
#include "policy/policy_actor.h"

namespace recur::cli {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

EnvPolicyBench bench_env_policy(const EnvPolicyBenchConfig& config) {
  RECUR_CHECK_ARG(config.num_envs >= 1 && config.steps >= 1,
                  "bench envs --policy: --num-envs {} and --steps {} must be >= 1", config.num_envs,
                  config.steps);
  const agent::PolicyTarget target = agent::load_policy_target(config.target);
  RECUR_CHECK(!target.env_id.empty(),
              "bench envs --policy: {} records no env id (a checkpoint written outside `recur "
              "train`); use a run directory or checkpoint of a training run",
              target.path.string());
  const policy::PolicySpec& spec = target.checkpoint.spec;
  const int n = config.num_envs;
  const int64_t rounds = (config.steps + n - 1) / n;
  EnvPolicyBench out;
  out.env_id = target.env_id;
  // Acts first (fresh states), then sits out the random row.
  policy::PolicyActor actor(spec, n);
  actor.load(target.checkpoint.tensors);
  for (const bool use_policy : {true, false}) {
    envs::VectorEnv venv(target.env_id, n, target.env_options);
    RECUR_CHECK(venv.obs_dim() == spec.obs_dim,
                "bench envs --policy: the policy in {} takes observations of size {}, {} gives {}",
                target.path.string(), spec.obs_dim, target.env_id, venv.obs_dim());
    venv.reset(config.seed);
    const auto adim = static_cast<size_t>(venv.action_dim());
    std::vector<float> actions(static_cast<size_t>(n) * adim), logp(static_cast<size_t>(n)),
        values(static_cast<size_t>(n));
    std::vector<uint8_t> starts(venv.episode_start().begin(), venv.episode_start().end());
    Rng rng(derive_seed(config.seed, 0xac7));
    double env_s = 0, act_s = 0;
    int64_t episodes = 0;
    for (int64_t r = 0; r < rounds; ++r) {
      const auto t0 = Clock::now();
      if (use_policy) {
        // Sampled, as the actor loop collects: the states training visits.
        actor.act(venv.obs(), starts, rng, false, actions, logp, values);
      } else {
        const envs::Space& space = venv.single_action_space();
        for (size_t i = 0; i < actions.size(); i += adim)
          space.sample(rng, std::span(actions).subspan(i, adim));
      }
      const auto t1 = Clock::now();
      act_s += std::chrono::duration<double>(t1 - t0).count();
      venv.step(actions);
      env_s += seconds_since(t1);
      for (const uint8_t s : venv.episode_start()) episodes += s;
      std::copy(venv.episode_start().begin(), venv.episode_start().end(), starts.begin());
    }
    const double steps = static_cast<double>(rounds) * n;
    out.rows.push_back({use_policy ? "policy" : "random", 1e6 * env_s / steps,
                        use_policy ? 1e6 * act_s / steps : 0.0, episodes,
                        episodes > 0 ? steps / static_cast<double>(episodes) : 0.0});
  }
  return out;
}

std::string format_env_policy(const EnvPolicyBench& bench, const EnvPolicyBenchConfig& config) {
  std::string s = fmt::format(
      "{} x{} envs on one thread, {} env steps per row, from {} (actions sampled by its policy on "
      "the CPU, then uniformly random); env us = inside step() alone\n",
      bench.env_id, config.num_envs, config.steps, config.target);
  s += fmt::format("{:<8} {:>12} {:>12} {:>10} {:>12}\n", "actions", "env us/step", "act us/step",
                   "episodes", "mean length");
  for (const auto& r : bench.rows)
    s += fmt::format("{:<8} {:>12.2f} {:>12.2f} {:>10} {:>12.1f}\n", r.actions, r.env_us_per_step,
                     r.act_us_per_step, r.episodes, r.mean_length);
  if (bench.rows.size() == 2 && bench.rows[1].env_us_per_step > 0)
    s += fmt::format("policy / random env cost: {:.2f}x\n",
                     bench.rows[0].env_us_per_step / bench.rows[1].env_us_per_step);
  return s;
}

}  // namespace recur::cli
