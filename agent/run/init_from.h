// run.init_from: a training job (or `recur bench train`) that starts from a trained policy instead
// of a fresh initialization. Fine-tuning, a curriculum (a longer T-maze after a short one), or
// timing the learner on the episodes a trained policy plays rather than a fresh one's short ones.
#pragma once

#include <string>

#include "agent/algorithm.h"
#include "agent/config/config.h"

namespace recur::agent {

// Loads config.run.init_from (a run directory: its best checkpoint, else its latest; or a
// checkpoint file) into `algo`, built from `config` and not yet trained. Returns the checkpoint
// loaded, or "" when config.run.init_from is empty. Throws recur::Error naming run.init_from when
// the file does not load, when its policy's spec differs from `algo`'s (listing the keys that
// differ), or when the algorithm cannot start from a policy alone. A checkpoint of another env
// with the same spaces loads, with a warning.
std::string start_from_policy(const TrainConfig& config, Algorithm& algo);

}  // namespace recur::agent
