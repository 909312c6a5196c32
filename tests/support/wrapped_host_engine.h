// The host PPO engine behind a class that a test derives from to implement one more part of the
// engine contract (agent/ppo/engine.h: deferred steps, rollout math) the way a device engine
// would, while every other call passes through to the host engine; the small policy those tests
// train, and the statistics both flows must agree on.
#pragma once

#include <cmath>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "agent/ppo/engine.h"
#include "agent/ppo/updater.h"
#include "core/rng.h"
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

// A rollout of small_policy_spec()'s shapes with random observations, actions, log-probs,
// rewards and values, one episode start at (0, 0); state_every > 0 sizes its stored chunk states
// (left zero) for algo.bptt_steps.
inline agent::Rollout random_rollout(const policy::PolicySpec& spec, int T, int N, Rng& rng,
                                     int state_every = 0) {
  agent::Rollout r;
  r.state_every = state_every;
  r.resize(T, N, spec.obs_dim, 1, spec.state_size());
  for (auto& v : r.obs) v = static_cast<float>(rng.uniform(-1, 1));
  for (auto& v : r.actions) v = static_cast<float>(rng.uniform_int(2));
  for (auto& v : r.log_probs) v = static_cast<float>(-0.69 + rng.uniform(-0.3, 0.3));
  for (auto& v : r.rewards) v = static_cast<float>(rng.uniform(-1, 1));
  for (auto& v : r.values) v = static_cast<float>(rng.uniform(-0.5, 0.5));
  r.episode_start[0] = 1;
  return r;
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
  void log_probs(std::span<const int> envs, std::span<float> out,
                 std::span<float> values) override {
    inner_->log_probs(envs, out, values);
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

// The host engine with deferred steps: each step() is compute() and, unless the run decided to
// skip it, apply(): the contract the CUDA engine's device guard implements. A non-finite
// minibatch skips; with stop every later one of the run skips too, unless tolerated() says the
// minibatch is a loss scale's overflow (kernels::deferred_step_guard's tolerate_overflow).
class DeferringEngine : public WrappedHostEngine {
 public:
  using WrappedHostEngine::WrappedHostEngine;

  bool defers_steps() const override { return true; }
  void begin_steps(int count, double max_grad_norm, double lr, bool stop) override {
    REQUIRE(results_.empty());
    count_ = count, max_grad_norm_ = max_grad_norm, lr_ = lr, stop_ = stop, stopped_ = false;
    ++runs;
  }
  void step(std::span<const int> envs, const kernels::PpoLossConfig& loss,
            bool normalize) override {
    REQUIRE(static_cast<int>(results_.size()) < count_);
    const agent::MinibatchResult res = compute(envs, loss, normalize);
    results_.push_back(res);
    const bool bad = !std::isfinite(res.loss) || !std::isfinite(res.grad_norm);
    if (stopped_ || bad) {
      stopped_ = stopped_ || (bad && stop_ && !tolerated(res));
      return;
    }
    inner().apply(res.grad_norm, max_grad_norm_, lr_);
  }
  std::span<const agent::MinibatchResult> end_steps() override {
    out_ = std::move(results_);
    results_.clear();
    return out_;
  }

  int runs = 0;  // begin_steps calls: host reads of a run's results

 protected:
  virtual bool tolerated(const agent::MinibatchResult& /*res*/) const { return false; }

 private:
  int count_ = 0;
  double max_grad_norm_ = 0, lr_ = 0;
  bool stop_ = false, stopped_ = false;
  std::vector<agent::MinibatchResult> results_, out_;
};

}  // namespace recur::test
