// Gymnasium's maybe_parse_reset_bounds as env options: reset_low / reset_high replace the default
// range of the initial-state draw (Gymnasium passes them as reset(options={"low", "high"})).
#pragma once

#include "core/error.h"
#include "core/options.h"

namespace recur::envs {

inline void read_reset_bounds(OptionReader& options, double& low, double& high) {
  low = options.get_double("reset_low", low);
  high = options.get_double("reset_high", high);
  RECUR_CHECK(low <= high, "reset_low ({}) must not be above reset_high ({})", low, high);
}

}  // namespace recur::envs
