// Headless evaluation: runs a policy on fresh envs, carrying each env's recurrent state across
// steps and resetting it at episode starts, until `episodes` episodes have finished. Each env
// contributes an equal share of the episodes (so short episodes are not over-counted).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/options.h"
#include "policy/device_choice.h"
#include "policy/policy_spec.h"
#include "policy/tensor.h"

namespace recur::envs {
class BatchEnv;
}

namespace recur::agent {

struct EvalConfig {
  std::string env_id;
  Options env_options;
  int episodes = 10;
  int num_envs = 4;
  // Threads stepping those envs (envs::VectorEnv's pool; at most num_envs): the results are the
  // same for any count. Unused with envs built elsewhere.
  int threads = 1;
  uint64_t seed = 1000;
  bool deterministic = true;
  policy::Placement placement;  // where the actor's core runs (checkpoints load on any device)
};

struct EvalResult {
  std::vector<double> returns;
  std::vector<int> lengths;
  double mean_return() const;
  double std_return() const;
  double mean_length() const;
};

// `tensors` holds the policy's parameters and normalizer statistics (obs_norm.*).
EvalResult evaluate_policy(const policy::PolicySpec& spec, const policy::TensorMap& tensors,
                           const EvalConfig& config);
// On envs built elsewhere (config.env_id, env_options and num_envs unused): they are reset with
// config.seed and stepped until config.episodes episodes have finished.
EvalResult evaluate_policy(const policy::PolicySpec& spec, const policy::TensorMap& tensors,
                           const EvalConfig& config, envs::BatchEnv& env);

}  // namespace recur::agent
