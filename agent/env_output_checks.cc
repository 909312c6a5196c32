#include "agent/env_output_checks.h"

#include "core/error.h"
#include "core/finite.h"

namespace recur::agent {
namespace {

// `values` holds rows of `width`; row r of it is env `first + r` of the batch.
void check_rows(const envs::BatchEnv& env, std::span<const float> values, int width, int first,
                int64_t steps, const char* what) {
  const auto bad = first_nonfinite(values);
  if (!bad) return;
  const auto w = static_cast<size_t>(width);
  throw Error(fmt::format(
      "env {} (index {} of a batch of {}) returned a non-finite {} ({}[{}] = {}) at env step {} "
      "of the run; recur cannot learn from NaN or infinity: fix the env so that it returns "
      "finite values (clip or replace them in its step/observe)",
      env.id(), first + static_cast<int>(*bad / w), env.num_envs(), what, what, *bad % w,
      values[*bad], steps));
}

}  // namespace

void check_env_obs(const envs::BatchEnv& env, int64_t steps) {
  check_env_obs(env, steps, 0, env.num_envs());
}

void check_env_step(const envs::BatchEnv& env, int64_t steps) {
  check_env_step(env, steps, 0, env.num_envs());
}

void check_env_obs(const envs::BatchEnv& env, int64_t steps, int begin, int end) {
  const auto o = static_cast<size_t>(env.obs_dim());
  check_rows(
      env, env.obs().subspan(static_cast<size_t>(begin) * o, static_cast<size_t>(end - begin) * o),
      env.obs_dim(), begin, steps, "observation");
}

void check_env_step(const envs::BatchEnv& env, int64_t steps, int begin, int end) {
  check_env_obs(env, steps, begin, end);
  check_rows(env,
             env.rewards().subspan(static_cast<size_t>(begin), static_cast<size_t>(end - begin)), 1,
             begin, steps, "reward");
  // The last observation of an episode that just ended (its value bootstraps a truncation).
  const int o = env.obs_dim();
  const auto starts = env.episode_start();
  const auto final_obs = env.final_obs();
  for (int i = begin; i < end; ++i)
    if (starts[static_cast<size_t>(i)] && (env.terminated()[i] || env.truncated()[i]))
      check_rows(env, final_obs.subspan(static_cast<size_t>(i) * o, static_cast<size_t>(o)), o, i,
                 steps, "final observation");
}

}  // namespace recur::agent
