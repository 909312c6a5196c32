#include "agent/baselines/heuristic.h"

#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "core/worker_pool.h"
#include "envs/box2d/heuristic.h"
#include "envs/registry.h"

namespace recur::agent {

std::vector<EpisodeRecord> run_heuristic_rollout(const HeuristicRolloutConfig& config) {
  RECUR_CHECK_ARG(config.episodes > 0, "heuristic rollout: episodes = {}; use 1 or more",
                  config.episodes);
  RECUR_CHECK_ARG(config.threads > 0, "heuristic rollout: threads = {}; use 1 or more",
                  config.threads);
  RECUR_CHECK(envs::make_heuristic(config.env_id) != nullptr,
              "{} has no heuristic controller; Gymnasium has them for LunarLander-v3, "
              "LunarLanderContinuous-v3, BipedalWalker-v3 and BipedalWalkerHardcore-v3",
              config.env_id);
  std::vector<EpisodeRecord> out(static_cast<size_t>(config.episodes));
  WorkerPool pool(std::min(config.threads, config.episodes));
  pool.run([&](int slice) {
    auto env = envs::make(config.env_id, config.env_options);
    auto controller = envs::make_heuristic(config.env_id);
    std::vector<float> action(static_cast<size_t>(env->action_dim()));
    for (int k = slice; k < config.episodes; k += pool.size()) {
      const auto obs = env->reset(derive_seed(config.seed, static_cast<uint64_t>(k)));
      controller->reset();
      controller->first_action(obs, action);
      envs::StepResult r = env->step(action);
      while (!r.done()) {
        controller->act(r.obs, action);
        r = env->step(action);
      }
      out[static_cast<size_t>(k)] = {k, env->episode_return(), env->elapsed_steps(), r.truncated};
    }
  });
  return out;
}

}  // namespace recur::agent
