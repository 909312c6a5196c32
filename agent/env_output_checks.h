// NaN and infinity from an env, caught where they enter recur: a plugin's or a Python env's bug
// would otherwise poison the normalizer statistics, the rollout and then the weights, and
// surface (if ever) as a non-finite loss many updates later, far from its cause.
#pragma once

#include <cstdint>

#include "envs/batch_env.h"

namespace recur::agent {

// Checks the batch's current observations (all rows) and, after a step, its rewards and the final
// observations of the envs whose episode just ended. Throws recur::Error naming the env (id and
// index in the batch), the element, the value and `env_steps` (the run's count, as progress.csv).
void check_env_obs(const envs::BatchEnv& env, int64_t env_steps);
void check_env_step(const envs::BatchEnv& env, int64_t env_steps);
// The same for envs [begin, end) of the batch only (one env group; the other rows may be
// stepping on other threads and are not read).
void check_env_obs(const envs::BatchEnv& env, int64_t env_steps, int begin, int end);
void check_env_step(const envs::BatchEnv& env, int64_t env_steps, int begin, int end);

}  // namespace recur::agent
