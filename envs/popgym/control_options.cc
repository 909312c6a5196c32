#include "envs/popgym/control_options.h"

#include <cmath>

#include "core/error.h"

namespace recur::envs {

int read_max_episode_length(OptionReader& options, int registered, std::string_view id) {
  // The registry read max_episode_steps with the same fallback: this is the limit it applies.
  const long long steps = options.get_int("max_episode_steps", registered);
  // 0 = recur applies no limit: a caller's own TimeLimit does (gymnasium.make(recur/<id>) makes
  // the env so); the length then still sets the reward 1/length, POPGym's by default.
  const long long length = options.get_int("max_episode_length", steps > 0 ? steps : registered);
  RECUR_CHECK(steps == 0 || length == steps,
              "env {}: max_episode_length = {} but max_episode_steps = {}; POPGym's "
              "max_episode_length is recur's time limit, so give max_episode_steps={} (it also "
              "sets the reward 1/{} per step)",
              id, length, steps, length, length);
  RECUR_CHECK(length >= 1 && length <= 1'000'000'000,
              "env {}: episode length {}; POPGym's control tasks need an episode length in "
              "[1, 1000000000] (the step reward is 1/length)",
              id, length);
  return static_cast<int>(length);
}

double read_noise_sigma(OptionReader& options, double fallback, std::string_view id) {
  const double sigma = options.get_double("noise_sigma", fallback);
  RECUR_CHECK(std::isfinite(sigma) && sigma >= 0 && sigma <= 1e6,
              "env {}: noise_sigma = {}; use a finite standard deviation in [0, 1e6]", id, sigma);
  return sigma;
}

}  // namespace recur::envs
