// What the ranks of a data-parallel run must agree on, checked before training starts and at
// every checkpoint: ranks started with different configs, recur builds or envs would otherwise
// average gradients of different problems without a word, and weights that drift apart would
// make the checkpoint rank 0 writes describe nobody.
#pragma once

#include <string>

#include "agent/dist/communicator.h"
#include "policy/tensor.h"

namespace recur::agent::dist {

struct RankSummary {
  std::string version;  // recur's version and build (CUDA, MPI, NCCL)
  std::string config;   // the resolved config YAML (docs/CONFIG.md: every key)
  std::string env;      // env id with its observation and action spaces
  std::string weights;  // fingerprint() of the policy's tensors
  int64_t env_steps = 0;
};

// A 64-bit FNV-1a hash (hex) over every tensor's name, shape and bytes, in name order: equal
// exactly when the tensors are bit-identical (up to hash collisions).
std::string fingerprint(const policy::TensorMap& tensors);

// All ranks compare their summaries with rank 0's; throws recur::Error on every rank, naming the
// first field that differs, the ranks and both values (for the config: the key), and what to do.
// `when` says at which point of the run ("at start-up", "at env step N").
void check_ranks_agree(Communicator& comm, const RankSummary& mine, const std::string& when);

}  // namespace recur::agent::dist
