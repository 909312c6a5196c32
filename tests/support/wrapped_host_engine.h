// The host PPO engine behind a class that a test derives from to implement one more part of the
// engine contract (agent/ppo/engine.h: deferred steps, rollout math) the way a device engine
// would, while every other call passes through to the host engine; and the small policy those
// tests train.
#pragma once

#include <memory>
#include <span>
#include <utility>

#include "agent/ppo/engine.h"
#include "policy/policy_spec.h"

namespace recur::test {

// Discrete actions (2), 3 observations, an encoder of 8, LSTM 8: a few milliseconds an update.
inline policy::PolicySpec small_policy_spec() {
  policy::PolicySpec spec;
  spec.obs_dim = 3;
  spec.action_dim = 2;
  spec.encoder = {8};
  spec.hidden = 8;
  return spec;
}

class WrappedHostEngine : public agent::PpoEngine {
 public:
  WrappedHostEngine(const policy::PolicySpec& spec, const policy::TensorMap& weights)
      : inner_(agent::make_host_ppo_engine(spec, policy::Placement{}, 1e-5f)) {
    inner_->load(weights);
  }
  explicit WrappedHostEngine(std::unique_ptr<agent::PpoEngine> inner) : inner_(std::move(inner)) {}
  policy::Device device() const override { return inner_->device(); }
  const policy::PolicySpec& spec() const override { return inner_->spec(); }
  void load(const policy::TensorMap& t) override { inner_->load(t); }
  policy::TensorMap to_tensors() const override { return inner_->to_tensors(); }
  policy::TensorMap gradient_tensors() const override { return inner_->gradient_tensors(); }
  void begin_update(const agent::Rollout& r) override { inner_->begin_update(r); }
  agent::MinibatchResult compute(std::span<const int> envs, const kernels::PpoLossConfig& loss,
                                 bool normalize) override {
    return inner_->compute(envs, loss, normalize);
  }
  void log_probs(std::span<const int> envs, std::span<float> out) override {
    inner_->log_probs(envs, out);
  }
  double average_gradients(agent::dist::Communicator& c, std::span<float> e, float w) override {
    return inner_->average_gradients(c, e, w);
  }
  void apply(double norm, double max_norm, double lr) override {
    inner_->apply(norm, max_norm, lr);
  }
  policy::TensorMap optimizer_tensors() const override { return inner_->optimizer_tensors(); }
  void load_optimizer_tensors(const policy::TensorMap& t) override {
    inner_->load_optimizer_tensors(t);
  }

 protected:
  agent::PpoEngine& inner() { return *inner_; }

 private:
  std::unique_ptr<agent::PpoEngine> inner_;
};

}  // namespace recur::test
