// A trained policy as users name it: a run directory of `recur train` (its checkpoints/best,
// else checkpoints/latest) or a checkpoint file, with the env the run trained on. Shared by
// `recur eval`, `recur record` and the Python package's Policy.load.
#pragma once

#include <filesystem>
#include <string>

#include "core/options.h"
#include "policy/convert/onnx.h"
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

// How `recur convert export --to onnx` and recur.Policy.export_onnx export a target: its
// checkpoint's metadata and path in the model's metadata and, for a continuous policy, the
// action box of the env it records (from the registry, with the recorded options) to clamp the
// mean to. The box stays empty for a target that records no env or one the registry does not
// hold (a Python env, a plugin's env whose plugin is not loaded). Throws recur::Error when the
// env's action space does not fit the policy.
policy::convert::OnnxExportOptions onnx_export_options(const PolicyTarget& target);

}  // namespace recur::agent
