// The host PPO engine behind a class that a test derives from to implement one more part of the
// engine contract (agent/ppo/engine.h: deferred steps, rollout math) the way a device engine
// would, while every other call passes through to the host engine; the small policy those tests
// train, and the statistics both flows must agree on.
#pragma once

#include <memory>
#include <span>
#include <utility>

#include <doctest/doctest.h>

#include "agent/ppo/engine.h"
#include "agent/ppo/updater.h"
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

// The update's statistics, bit for bit: losses, entropy, KL, clip fraction, gradient norm and
// minibatch count.
inline void check_same_stats(const agent::UpdateStats& a, const agent::UpdateStats& b) {
  CHECK(a.policy_loss == b.policy_loss);
  CHECK(a.value_loss == b.value_loss);
  CHECK(a.entropy == b.entropy);
  CHECK(a.approx_kl == b.approx_kl);
  CHECK(a.clip_fraction == b.clip_fraction);
  CHECK(a.grad_norm == b.grad_norm);
  CHECK(a.minibatches == b.minibatches);
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
