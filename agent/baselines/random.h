// A random-policy rollout over a VectorEnv: the baseline (the return a policy must beat) for any
// env, printed by `recur demo`.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/options.h"

namespace recur::agent {

struct RandomRolloutConfig {
  std::string env_id = "CartPole-v1";
  Options env_options;
  int num_envs = 4;
  int episodes = 10;  // stop after this many finished episodes (over all envs)
  uint64_t seed = 0;
};

struct EpisodeRecord {
  int env_index = 0;
  double episode_return = 0;
  int length = 0;
  bool truncated = false;
};

// Runs until `episodes` episodes have finished; calls on_episode for each as it ends.
std::vector<EpisodeRecord> run_random_rollout(
    const RandomRolloutConfig& config,
    const std::function<void(const EpisodeRecord&)>& on_episode = {});

}  // namespace recur::agent
