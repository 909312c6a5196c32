// run.init_from: a training job (or `recur bench train`) that starts from a trained policy instead
// of a fresh initialization. Fine-tuning, a curriculum (a longer T-maze after a short one), or
// timing the learner on the episodes a trained policy plays rather than a fresh one's short ones.
#pragma once

#include <string>

#include "agent/algorithm.h"
#include "agent/config/config.h"

namespace recur::agent {

// Loads config.run.init_from into `algo`, built from `config` and not yet trained, and returns what
// it loaded ("" when config.run.init_from is empty):
//   PPO: a run directory (its best checkpoint, else its latest) or a checkpoint file; the policy's
//        parameters and observation-normalizer statistics (Algorithm::load_policy).
//   SAC/TD3: a run directory of the same algo.type; its latest resume state's actor, critics,
//        targets and temperature (Algorithm::load_trained: a policy checkpoint lacks the critics).
// Throws recur::Error naming run.init_from when nothing loads, when the policy's spec differs from
// `algo`'s (listing the keys that differ), or when the saved learner does not fit. Initializer
// settings (log_std_init, forget_bias, the gains, init) and TD3's exploration noise may differ:
// the weights replace the first, the config's noise is how the fine-tune explores. A run of
// another env with the same spaces loads, with a warning.
std::string start_from_policy(const TrainConfig& config, Algorithm& algo);

}  // namespace recur::agent
