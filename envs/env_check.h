// The checks every registered env must pass, in one place: the env test loops them over the
// registry, and `recur env-check ID` runs them on one env for authors of new envs.
//
// Checks: spaces are well formed; reset(seed) is deterministic (the same seed, the same episode,
// on a fresh env and on a used one) and the seed matters (at least one of 16 other seeds gives
// another episode: an env with little randomness, a coin flip, passes); observations stay
// inside the observation space and rewards are finite over random episodes; episodes end no later
// than the time limit, truncated exactly at it (also with an overridden short limit); the
// episode_start flag and episode bookkeeping; bad actions (wrong size, NaN, out-of-range index)
// throw std::invalid_argument; step before reset and after the end throw std::logic_error; and,
// for envs that expose their state, set_state replays a step exactly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/options.h"

namespace recur::envs {

class Registry;

struct EnvCheckResult {
  std::string name;  // "seeding", "spaces", ...
  bool passed = true;
  std::string detail;  // what was checked, or what went wrong
};

struct EnvCheckReport {
  std::string id;
  std::vector<EnvCheckResult> results;
  bool passed() const;
};

struct EnvCheckConfig {
  uint64_t seed = 0;
  int episodes = 5;                  // random-action episodes for the space and limit checks
  int max_steps_per_episode = 5000;  // guard for envs without a time limit
};

EnvCheckReport check_env(const std::string& id, const Options& options = {},
                         const EnvCheckConfig& config = {});
// The same, for an env of `registry` (a registry of a program's or a test's own).
EnvCheckReport check_env(const Registry& registry, const std::string& id,
                         const Options& options = {}, const EnvCheckConfig& config = {});

}  // namespace recur::envs
