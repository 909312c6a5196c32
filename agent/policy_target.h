// A trained policy as users name it: a run directory of `recur train` (its checkpoints/best,
// else checkpoints/latest) or a checkpoint file, with the env the run trained on. Shared by
// `recur eval`, `recur record` and the Python package's Policy.load.
#pragma once

#include <filesystem>
#include <string>

#include "core/options.h"
#include "policy/policy_checkpoint.h"

namespace recur::agent {

struct PolicyTarget {
  std::filesystem::path path;  // the checkpoint file
  policy::PolicyCheckpoint checkpoint;
  // env_override when given, else the env the checkpoint records ("" when it records none).
  std::string env_id;
  // The recorded env options, when env_id is the recorded env.
  Options env_options;
  // Where the run's envs came from (checkpoint metadata run.env_source): "" for recur's
  // registry, "python" for a Gymnasium env given to recur.train(config, env=...).
  std::string env_source;
};

// Throws recur::Error naming the path when it is neither a checkpoint nor a run directory with
// one, or when the checkpoint does not load; and, unless foreign_env_ok, when the run trained on
// envs from outside the registry (Python) and no env_override names one: the CLI cannot rebuild
// them.
PolicyTarget load_policy_target(const std::string& target, const std::string& env_override = "",
                                bool foreign_env_ok = false);

}  // namespace recur::agent
