// Adam (Kingma & Ba) over flat parameter groups, as torch.optim.Adam: elementwise, so it updates
// any executor's layout directly. Also the global gradient-norm clip that runs before it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "policy/policy_learner.h"
#include "policy/tensor.h"

namespace recur::agent {

struct AdamConfig {
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-5f;
};

class Adam {
 public:
  Adam(const std::vector<policy::ParamGroup>& groups, AdamConfig config = {});
  // One update with learning rate lr over the groups' current gradients.
  void step(const std::vector<policy::ParamGroup>& groups, float lr);
  int64_t steps() const { return t_; }
  // Moments and step count as tensors "optim.adam.m.<group>", "optim.adam.v.<group>",
  // "optim.adam.step" (for resume), and back (recur::Error on a missing or misshapen one).
  // Moments of a group with a layout are saved in canonical order (device-independent).
  policy::TensorMap to_tensors() const;
  void load_tensors(const policy::TensorMap& tensors);

 private:
  AdamConfig config_;
  std::vector<std::string> names_;
  std::vector<const policy::FlatLayout*> layouts_;  // per group, null = saved as is
  std::vector<std::vector<float>> m_, v_;
  int64_t t_ = 0;
};

// The global L2 norm of all gradients (computed in double).
double global_grad_norm(const std::vector<policy::ParamGroup>& groups);
// Scales every gradient by max_norm / norm when norm > max_norm; returns the norm before.
double clip_grad_norm(const std::vector<policy::ParamGroup>& groups, double max_norm);

}  // namespace recur::agent
