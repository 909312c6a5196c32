// Episodes of a hand-written controller (Gymnasium's Box2D heuristics, envs/box2d/heuristic.h):
// the statistical parity check of an env port and a reference score for trained policies.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agent/baselines/random.h"
#include "core/options.h"

namespace recur::agent {

struct HeuristicRolloutConfig {
  std::string env_id = "LunarLander-v3";
  Options env_options;
  int episodes = 100;
  uint64_t seed = 0;  // episode k is reset with derive_seed(seed, k): independent of threads
  int threads = 1;    // episodes are split over this many threads
};

// Runs `episodes` episodes, each on a fresh env, and returns them in episode order (env_index is
// the episode index). recur::Error when the env id has no heuristic controller.
std::vector<EpisodeRecord> run_heuristic_rollout(const HeuristicRolloutConfig& config);

}  // namespace recur::agent
