// Options shared by POPGym's control tasks (popgym 1.0.7's constructor arguments that set the
// difficulty: max_episode_length, and noise_sigma for the noisy tasks).
//
// POPGym's max_episode_length is recur's time limit: POPGym reports truncated once the episode
// reaches it, which is what the base Env's max_episode_steps does, and the step reward is
// 1/max_episode_length. One number therefore sets both: the option max_episode_steps (the
// registry's time limit, registered at POPGym's length for each difficulty). max_episode_length
// is accepted under POPGym's name when it agrees with max_episode_steps.
#pragma once

#include <string_view>

#include "core/options.h"

namespace recur::envs {

// The episode length in steps: max_episode_steps (or `registered`, the id's time limit), which
// max_episode_length may repeat. With max_episode_steps 0 (recur applies no limit; an outer
// TimeLimit does, as gymnasium.make's) it is max_episode_length, or `registered`: the reward
// still divides by it. Throws recur::Error naming `id` when the two differ or the length is not
// in [1, 1e9].
int read_max_episode_length(OptionReader& options, int registered, std::string_view id);

// noise_sigma: the standard deviation of the observation noise; finite and >= 0.
double read_noise_sigma(OptionReader& options, double fallback, std::string_view id);

}  // namespace recur::envs
