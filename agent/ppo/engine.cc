// The host PPO engine: PolicyLearner (its core on the CPU or, with a cuda placement, on cuDNN
// through host mirrors) and the host Adam.
#include "agent/ppo/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "agent/adam.h"
#include "agent/dist/communicator.h"
#include "core/error.h"
#include "core/finite.h"
#include "policy/policy_actor.h"

namespace recur::agent {

void PpoEngine::publish(policy::PolicyActor& actor) {
  actor.load_weights(to_tensors());
}

// Only engines whose scales_gradients() is true are given a scale.
void PpoEngine::set_gradient_scale(float /*scale*/) {
  detail::throw_internal(__FILE__, __LINE__,
                         "set_gradient_scale on an engine without 16-bit gradients");
}

// Only engines whose defers_steps() is true are given deferred steps.
void PpoEngine::begin_steps(int /*count*/, double /*max_grad_norm*/, double /*lr*/,
                            bool /*stop_on_nonfinite*/) {
  detail::throw_internal(__FILE__, __LINE__, "begin_steps on an engine without deferred steps");
}
void PpoEngine::step(std::span<const int> /*envs*/, const kernels::PpoLossConfig& /*loss*/,
                     bool /*normalize_advantage*/) {
  detail::throw_internal(__FILE__, __LINE__, "step on an engine without deferred steps");
}
std::span<const MinibatchResult> PpoEngine::end_steps() {
  detail::throw_internal(__FILE__, __LINE__, "end_steps on an engine without deferred steps");
}
bool PpoEngine::parameters_finite() {
  for (const auto& [name, t] : to_tensors())
    if (first_nonfinite(std::span<const float>(t.data))) return false;
  return true;
}

void PpoEngine::begin_update_gae(const Rollout& /*r*/, float /*gamma*/, float /*lambda*/) {
  detail::throw_internal(__FILE__, __LINE__, "begin_update_gae on an engine without rollout math");
}
void PpoEngine::anchor_to_proximal(int /*per_mb*/, bool /*values*/) {
  detail::throw_internal(__FILE__, __LINE__,
                         "anchor_to_proximal on an engine without rollout math");
}
void PpoEngine::end_update(Rollout& /*r*/) {
  detail::throw_internal(__FILE__, __LINE__, "end_update on an engine without rollout math");
}

namespace {

// Gathers env columns `envs` of a (T, N, width) buffer into (T, Bm, width).
template <typename V>
void gather(const V& src, int T, int N, int width, std::span<const int> envs, V& dst) {
  const auto bm = envs.size();
  dst.resize(static_cast<size_t>(T) * bm * width);
  for (int t = 0; t < T; ++t)
    for (size_t j = 0; j < bm; ++j)
      std::copy_n(src.begin() + (static_cast<size_t>(t) * N + envs[j]) * width, width,
                  dst.begin() + (static_cast<size_t>(t) * bm + j) * width);
}

class HostPpoEngine final : public PpoEngine {
 public:
  HostPpoEngine(std::unique_ptr<policy::PolicyLearner> owned, policy::PolicyLearner& learner,
                float adam_eps)
      : owned_(std::move(owned)),
        learner_(learner),
        groups_(learner.parameter_groups()),
        adam_(groups_, AdamConfig{0.9f, 0.999f, adam_eps}) {}

  policy::Device device() const override { return policy::Device::kCpu; }
  const policy::PolicySpec& spec() const override { return learner_.spec(); }
  void load(const policy::TensorMap& tensors) override { learner_.load(tensors); }
  policy::TensorMap to_tensors() const override { return learner_.to_tensors(); }
  policy::TensorMap gradient_tensors() const override { return learner_.gradient_tensors(); }

  void begin_update(const Rollout& rollout) override { r_ = &rollout; }

  MinibatchResult compute(std::span<const int> envs, const kernels::PpoLossConfig& loss,
                          bool normalize_advantage) override {
    RECUR_ASSERT(r_ != nullptr);
    const Rollout& r = *r_;
    const int T = r.T, N = r.N, B = static_cast<int>(envs.size());
    const auto m = static_cast<size_t>(T) * B;
    gather(r.obs, T, N, r.obs_dim, envs, obs_);
    gather(r.actions, T, N, r.action_dim, envs, actions_);
    gather(r.episode_start, T, N, 1, envs, starts_);
    gather(r.log_probs, T, N, 1, envs, old_logp_);
    gather(r.values, T, N, 1, envs, old_values_);
    gather(r.advantages, T, N, 1, envs, adv_);
    gather(r.returns, T, N, 1, envs, ret_);
    // Reset steps (Rollout::transition 0) weigh nothing: means are over the transitions.
    const bool masked = r.has_reset_steps;
    if (masked) gather(r.transition, T, N, 1, envs, mask_);
    const auto valid = [&](size_t i) { return !masked || mask_[i] != 0; };
    size_t count = m;
    if (masked) count = static_cast<size_t>(std::count(mask_.begin(), mask_.end(), uint8_t{1}));
    state0_.resize(static_cast<size_t>(B) * r.state_size);
    for (int j = 0; j < B; ++j)
      std::copy_n(r.initial_state.begin() + static_cast<size_t>(envs[j]) * r.state_size,
                  r.state_size, state0_.begin() + static_cast<size_t>(j) * r.state_size);
    if (normalize_advantage && count > 1) {
      double mean = 0, sq = 0;
      for (size_t i = 0; i < m; ++i)
        if (valid(i)) mean += adv_[i];
      mean /= static_cast<double>(count);
      for (size_t i = 0; i < m; ++i)
        if (valid(i)) sq += (adv_[i] - mean) * (adv_[i] - mean);
      const double std = std::sqrt(sq / static_cast<double>(count - 1));
      for (size_t i = 0; i < m; ++i)
        adv_[i] = valid(i) ? static_cast<float>((adv_[i] - mean) / (std + 1e-8)) : 0.0f;
    }
    logp_.resize(m);
    ent_.resize(m);
    values_.resize(m);
    learner_.evaluate(T, B, obs_, actions_, starts_, state0_, logp_, ent_, values_);

    // The loss's gradient w.r.t. (log_prob, entropy, value) of every sample; means over the
    // count transitions (all m samples unless masked).
    const auto n_samples = static_cast<double>(std::max<size_t>(count, 1));
    const double inv_m = 1.0 / n_samples;
    d_logp_.resize(m);
    d_ent_.assign(m, static_cast<float>(-loss.ent_coef / n_samples));
    d_values_.resize(m);
    MinibatchResult out;
    for (size_t i = 0; i < m; ++i) {
      if (!valid(i)) {
        d_logp_[i] = d_ent_[i] = d_values_[i] = 0.0f;
        continue;
      }
      const kernels::PpoElement e = kernels::ppo_element(
          logp_[i], old_logp_[i], adv_[i], values_[i], old_values_[i], ret_[i], loss, inv_m);
      out.policy_loss += e.policy_loss;
      out.value_loss += e.value_loss;
      out.approx_kl += e.approx_kl;
      out.clip_fraction += e.clipped;
      out.entropy += ent_[i];
      d_logp_[i] = e.d_logp;
      d_values_[i] = e.d_value;
    }
    out.policy_loss *= inv_m, out.value_loss *= inv_m, out.entropy *= inv_m;
    out.approx_kl *= inv_m, out.clip_fraction *= inv_m;
    out.loss = out.policy_loss + loss.vf_coef * out.value_loss - loss.ent_coef * out.entropy;

    learner_.zero_gradients();
    learner_.backward(d_logp_, d_ent_, d_values_);
    out.grad_norm = global_grad_norm(groups_);
    return out;
  }

  void log_probs(std::span<const int> envs, std::span<float> out,
                 std::span<float> values) override {
    RECUR_ASSERT(r_ != nullptr);
    const Rollout& r = *r_;
    const int T = r.T, N = r.N, B = static_cast<int>(envs.size());
    const auto m = static_cast<size_t>(T) * B;
    RECUR_ASSERT(out.size() == m);
    gather(r.obs, T, N, r.obs_dim, envs, obs_);
    gather(r.actions, T, N, r.action_dim, envs, actions_);
    gather(r.episode_start, T, N, 1, envs, starts_);
    state0_.resize(static_cast<size_t>(B) * r.state_size);
    for (int j = 0; j < B; ++j)
      std::copy_n(r.initial_state.begin() + static_cast<size_t>(envs[j]) * r.state_size,
                  r.state_size, state0_.begin() + static_cast<size_t>(j) * r.state_size);
    logp_.resize(m);
    ent_.resize(m);
    values_.resize(m);
    learner_.evaluate(T, B, obs_, actions_, starts_, state0_, logp_, ent_, values_);
    std::copy(logp_.begin(), logp_.end(), out.begin());
    if (!values.empty()) {
      RECUR_ASSERT(values.size() == m);
      std::copy(values_.begin(), values_.end(), values.begin());
    }
  }

  double average_gradients(dist::Communicator& comm, std::span<float> extra,
                           float weight) override {
    size_t total = extra.size();
    for (const auto& g : groups_) total += g.grads.size();
    flat_.resize(total);
    auto at = flat_.begin();
    for (const auto& g : groups_) at = std::copy(g.grads.begin(), g.grads.end(), at);
    std::copy(extra.begin(), extra.end(), at);
    if (weight != 1.0f)
      for (float& x : flat_) x *= weight;
    comm.all_reduce_mean(flat_, "the gradient all-reduce");
    auto from = flat_.cbegin();
    for (const auto& g : groups_) {
      std::copy_n(from, g.grads.size(), g.grads.begin());
      from += static_cast<std::ptrdiff_t>(g.grads.size());
    }
    std::copy_n(from, extra.size(), extra.begin());
    return global_grad_norm(groups_);
  }

  void apply(double grad_norm, double max_grad_norm, double lr) override {
    const float scale = kernels::clip_scale(grad_norm, max_grad_norm);
    if (scale != 1.0f)
      for (const auto& g : groups_)
        for (float& x : g.grads) x *= scale;
    adam_.step(groups_, static_cast<float>(lr));
  }

  policy::TensorMap optimizer_tensors() const override { return adam_.to_tensors(); }
  void load_optimizer_tensors(const policy::TensorMap& tensors) override {
    adam_.load_tensors(tensors);
  }

 private:
  std::unique_ptr<policy::PolicyLearner> owned_;
  policy::PolicyLearner& learner_;
  std::vector<policy::ParamGroup> groups_;
  Adam adam_;
  const Rollout* r_ = nullptr;
  // Minibatch buffers, (T, Bm, ...).
  policy::AlignedVector<float> obs_, actions_, state0_, old_logp_, old_values_, adv_, ret_;
  policy::AlignedVector<float> logp_, ent_, values_, d_logp_, d_ent_, d_values_;
  std::vector<uint8_t> starts_, mask_;
  policy::AlignedVector<float> flat_;  // average_gradients()'s one buffer
};

}  // namespace

std::unique_ptr<PpoEngine> make_host_ppo_engine(policy::PolicyLearner& learner, float adam_eps) {
  return std::make_unique<HostPpoEngine>(nullptr, learner, adam_eps);
}

std::unique_ptr<PpoEngine> make_host_ppo_engine(const policy::PolicySpec& spec,
                                                const policy::Placement& placement, float adam_eps,
                                                int threads) {
  auto learner = std::make_unique<policy::PolicyLearner>(spec, placement, threads);
  policy::PolicyLearner& ref = *learner;
  return std::make_unique<HostPpoEngine>(std::move(learner), ref, adam_eps);
}

#ifndef RECUR_WITH_CUDA
std::unique_ptr<PpoEngine> make_cuda_ppo_engine(const policy::PolicySpec&, const policy::Placement&,
                                                float) {
  throw Error(
      "the CUDA learner needs a CUDA build of recur, and this one has no CUDA support "
      "(configured with RECUR_CUDA=OFF or without the CUDA toolkit); rebuild with the toolkit in "
      "/usr/local/cuda or set device.learner: cpu");
}
#endif

}  // namespace recur::agent
