// A policy as a portable checkpoint: the safetensors file of checkpoint.h holding every
// parameter under its canonical name (init_policy's names) and, in the metadata, the format tag
// "recur.format" = "recur.policy/1", the PolicySpec (policy.* and core.* keys) and whatever the
// caller adds (counters, env id, ...). Loading checks the tag, rebuilds the spec and checks that
// every tensor the spec needs is there with its shape; extra tensors under "optim." (optimizer
// state) are kept, any other unknown tensor is an error naming it.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "policy/checkpoint.h"
#include "policy/policy_spec.h"

namespace recur::policy {

inline constexpr const char* kPolicyFormat = "recur.policy/1";

struct PolicyCheckpoint {
  PolicySpec spec;
  TensorMap tensors;                            // parameters (+ "optim." state if saved)
  std::map<std::string, std::string> metadata;  // everything in the file's metadata
};

void save_policy(const std::filesystem::path& path, const PolicySpec& spec,
                 const TensorMap& tensors,
                 const std::map<std::string, std::string>& extra_metadata = {});
PolicyCheckpoint load_policy(const std::filesystem::path& path);

// The checks of load_policy on an already parsed checkpoint (`source` names it in messages).
PolicyCheckpoint validate_policy(Checkpoint checkpoint, const std::string& source);

}  // namespace recur::policy
