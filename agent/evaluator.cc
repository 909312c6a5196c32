#include "agent/evaluator.h"

#include <algorithm>
#include <cmath>

#include "agent/env_output_checks.h"
#include "core/error.h"
#include "envs/vector_env.h"
#include "policy/policy_actor.h"

namespace recur::agent {

double EvalResult::mean_return() const {
  double s = 0;
  for (double r : returns) s += r;
  return returns.empty() ? 0 : s / static_cast<double>(returns.size());
}

double EvalResult::std_return() const {
  const double m = mean_return();
  double s = 0;
  for (double r : returns) s += (r - m) * (r - m);
  return returns.empty() ? 0 : std::sqrt(s / static_cast<double>(returns.size()));
}

double EvalResult::mean_length() const {
  double s = 0;
  for (int l : lengths) s += l;
  return lengths.empty() ? 0 : s / static_cast<double>(lengths.size());
}

EvalResult evaluate_policy(const policy::PolicySpec& spec, const policy::TensorMap& tensors,
                           const EvalConfig& config) {
  RECUR_CHECK(config.episodes >= 1, "evaluation needs at least 1 episode, got {}", config.episodes);
  RECUR_CHECK(config.threads >= 1, "evaluation needs at least 1 stepping thread, got {}",
              config.threads);
  const int n = std::max(1, std::min(config.num_envs, config.episodes));
  envs::VectorEnv venv(config.env_id, n, config.env_options, std::min(config.threads, n));
  return evaluate_policy(spec, tensors, config, venv);
}

EvalResult evaluate_policy(const policy::PolicySpec& spec, const policy::TensorMap& tensors,
                           const EvalConfig& config, envs::BatchEnv& venv) {
  RECUR_CHECK(config.episodes >= 1, "evaluation needs at least 1 episode, got {}", config.episodes);
  const int n = venv.num_envs();
  RECUR_CHECK(venv.obs_dim() == spec.obs_dim,
              "the policy takes observations of size {}, env {} gives {}", spec.obs_dim, venv.id(),
              venv.obs_dim());
  policy::PolicyActor actor(spec, n, config.placement);
  actor.load(tensors);
  venv.reset(config.seed);
  Rng rng(derive_seed(config.seed, 77));
  // Env i runs episodes i, i + n, i + 2n, ... < episodes.
  std::vector<int> target(static_cast<size_t>(n)), done(static_cast<size_t>(n), 0);
  for (int i = 0; i < n; ++i)
    target[static_cast<size_t>(i)] = std::max(0, (config.episodes - i + n - 1) / n);
  const int adim = spec.action_width();
  std::vector<float> actions(static_cast<size_t>(n) * adim), lp(static_cast<size_t>(n)),
      v(static_cast<size_t>(n));
  std::vector<uint8_t> starts(venv.episode_start().begin(), venv.episode_start().end());
  EvalResult result;
  int finished = 0;
  int64_t steps = 0;
  while (finished < config.episodes) {
    if (steps == 0) check_env_obs(venv, 0);
    actor.act(venv.obs(), starts, rng, config.deterministic, actions, lp, v);
    venv.step(actions);
    steps += n;
    check_env_step(venv, steps);
    for (int i = 0; i < n; ++i) {
      if (!venv.episode_start()[i]) continue;
      auto& d = done[static_cast<size_t>(i)];
      if (d < target[static_cast<size_t>(i)]) {
        result.returns.push_back(venv.final_return()[i]);
        result.lengths.push_back(venv.final_length()[i]);
        ++d;
        ++finished;
      }
    }
    std::copy(venv.episode_start().begin(), venv.episode_start().end(), starts.begin());
  }
  return result;
}

}  // namespace recur::agent
