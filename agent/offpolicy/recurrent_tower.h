// One recurrent network of the replay learner: [encoder MLP ->] recurrent core, run over whole
// (T, B) replayed sequences on the fused sequence executor (CPU Eigen or cuDNN, by placement),
// with BPTT. The heads stay outside (plain Mlp): the actor's head, the critics' Q heads.
//
// Parameters travel under PolicySpec's names with a prefix: "<prefix>encoder.*",
// "<prefix>core.*" (canonical weights), so the actor tower's tensors are the acting policy's.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "policy/aligned.h"
#include "policy/device_choice.h"
#include "policy/executor.h"
#include "policy/mlp.h"
#include "policy/policy_learner.h"
#include "policy/tensor.h"

namespace recur::agent::offpolicy {

class RecurrentTower {
 public:
  // encoder: the MLP's spec (widths.front() = observation width), or nullopt-like empty widths
  // for none; core.input must be the encoder's output (or the observation width).
  RecurrentTower(const policy::MlpSpec* encoder, const policy::CoreSpec& core,
                 const policy::Placement& placement);

  int hidden() const { return core_->spec().hidden; }
  int state_size() const { return core_->spec().state_size(); }
  const policy::CoreSpec& core_spec() const { return core_->spec(); }

  // x (T, B, input), episode_start (T, B), initial_state (B, state_size) -> y() (T, B, H).
  void forward(int T, int B, std::span<const float> x, std::span<const uint8_t> episode_start,
               std::span<const float> initial_state);
  std::span<const float> y() const { return y_; }
  // Backward of the last forward: dy (T, B, H); gradients are added.
  void backward(std::span<const float> dy);
  void zero_gradients();

  // Appends this tower's (values, gradients) groups, named "<name>.encoder", "<name>.core".
  void append_groups(std::vector<policy::ParamGroup>& out, const std::string& name);

  void load(const policy::TensorMap& tensors, const std::string& prefix);
  void to_tensors(policy::TensorMap& out, const std::string& prefix) const;
  void gradient_tensors(policy::TensorMap& out, const std::string& prefix) const;

  // this = (1 - tau) * this + tau * source, parameter by parameter (a target network); the two
  // towers must have the same shape and placement (their flat layouts are then the same).
  void polyak_from(RecurrentTower& source, float tau);

 private:
  std::unique_ptr<policy::Mlp> encoder_;
  std::unique_ptr<policy::SequenceExecutor> core_;
  policy::AlignedVector<float> features_, y_, d_features_;
  int t_ = 0, b_ = 0;
};

// this = (1 - tau) * this + tau * source over two equal-length buffers.
void polyak(std::span<float> target, std::span<const float> source, float tau);

}  // namespace recur::agent::offpolicy
