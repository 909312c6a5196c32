#include "agent/baselines/random.h"

#include "core/error.h"
#include "core/rng.h"
#include "envs/vector_env.h"

namespace recur::agent {

std::vector<EpisodeRecord> run_random_rollout(
    const RandomRolloutConfig& config,
    const std::function<void(const EpisodeRecord&)>& on_episode) {
  RECUR_CHECK(config.episodes >= 1, "episodes = {}; use 1 or more", config.episodes);
  envs::VectorEnv venv(config.env_id, config.num_envs, config.env_options);
  venv.reset(config.seed);
  // The policy's own stream, separate from the envs' reset streams.
  Rng rng(derive_seed(config.seed, ~uint64_t{0}));
  std::vector<float> actions(static_cast<size_t>(venv.num_envs() * venv.action_dim()));
  const auto dim = static_cast<size_t>(venv.action_dim());

  std::vector<EpisodeRecord> out;
  while (static_cast<int>(out.size()) < config.episodes) {
    for (int i = 0; i < venv.num_envs(); ++i)
      venv.single_action_space().sample(
          rng, std::span(actions).subspan(static_cast<size_t>(i) * dim, dim));
    venv.step(actions);
    for (int i = 0; i < venv.num_envs() && static_cast<int>(out.size()) < config.episodes; ++i) {
      if (!venv.episode_start()[i]) continue;
      EpisodeRecord rec{i, venv.final_return()[i], venv.final_length()[i],
                        venv.truncated()[i] != 0};
      if (on_episode) on_episode(rec);
      out.push_back(rec);
    }
  }
  return out;
}

}  // namespace recur::agent
