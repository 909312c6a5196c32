// Checks shared by the POPGym board envs (Battleship, Concentration, MineSweeper, the
// labyrinths): decoding one value of a state vector, and keeping the time limit consistent with
// options that change POPGym's episode length.
#pragma once

#include <cmath>
#include <span>
#include <string>

#include "core/error.h"
#include "core/options.h"

namespace recur::envs::boards {

// state[i] as an integer in [lo, hi]; recur::Error naming the env and the field otherwise (a
// state from a file or from Python may hold anything, NaN included).
inline int state_int(std::span<const double> state, size_t i, int lo, int hi, const char* env,
                     const char* field) {
  const double v = state[i];
  RECUR_CHECK_ARG(std::isfinite(v) && v == std::floor(v) && v >= lo && v <= hi,
                  "{}: state[{}] ({}) = {}; expected an integer in [{}, {}]", env, i, field, v, lo,
                  hi);
  return static_cast<int>(v);
}

// POPGym ends these episodes itself after a number of steps that depends on the env's options
// (board size, decks, episode_length); recur reports that truncation through the registered time
// limit, which the registry applies after the factory. An option that changes the length without
// max_episode_steps changing with it would silently truncate at the wrong step, so it is an error
// that says which limit to set. `registered` is the id's registered limit, `needed` POPGym's.
inline void check_time_limit(OptionReader& options, const std::string& env, int registered,
                             int needed) {
  const long long given = options.get_int("max_episode_steps", -1);
  RECUR_CHECK(given >= 0 || needed == registered,
              "{}: these options make POPGym's episode {} steps long, but the registered time "
              "limit is {}; also set max_episode_steps = {} (or 0 for none)",
              env, needed, registered, needed);
}

}  // namespace recur::envs::boards
