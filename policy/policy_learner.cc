#include "policy/policy_learner.h"

#include <algorithm>

#include "core/error.h"
#include "policy/canonical_weights.h"
#include "policy/distributions.h"

namespace recur::policy {

PolicyLearner::PolicyLearner(const PolicySpec& spec, const Placement& placement, int threads)
    : spec_(spec), actor_head_(spec.actor_head_spec()), critic_head_(spec.critic_head_spec()) {
  spec.validate();
  // evaluate/backward are the Categorical's and DiagGaussian's; a squashed actor's density needs
  // the draw's eps (policy/distributions.h) and is the off-policy learner's to compute.
  RECUR_CHECK(spec.squash == Squash::kNone,
              "the PPO learner trains categorical and Gaussian actors only; policy.squash '{}' "
              "is an off-policy actor (algo.type sac / td3, which train it with their own learner)",
              to_string(spec.squash));
  RECUR_CHECK_ARG(threads >= 1, "PolicyLearner: threads {} must be >= 1", threads);
  // Two CPU towers only: a cuDNN core drives its own stream from the calling thread.
  if (threads >= 2 && !spec.shared_core && placement.device == Device::kCpu)
    pool_ = std::make_unique<WorkerPool>(2);
  for (int c = 0; c < (spec.shared_core ? 1 : 2); ++c) {
    Tower& t = c == 0 ? actor_ : critic_;
    if (!spec.encoder.empty()) t.encoder = std::make_unique<Mlp>(spec.encoder_spec());
    t.core = make_sequence_executor(spec.core_spec(), placement);
  }
  log_std_.assign(static_cast<size_t>(spec.action_dim), 0.0f);
  log_std_grad_.assign(log_std_.size(), 0.0f);
}

void PolicyLearner::load(const TensorMap& tensors) {
  Mlp* const encoders[2] = {actor_.encoder.get(), critic_.encoder.get()};
  SequenceExecutor* const cores[2] = {actor_.core.get(), critic_.core.get()};
  load_network(spec_, tensors, encoders, cores, actor_head_, critic_head_, log_std_);
}

TensorMap PolicyLearner::to_tensors() const {
  return collect(false);
}

TensorMap PolicyLearner::gradient_tensors() const {
  return collect(true);
}

// Parameters or their gradients, under the same canonical names.
TensorMap PolicyLearner::collect(bool gradients) const {
  TensorMap out;
  auto add = [&](const TensorMap& m) { out.insert(m.begin(), m.end()); };
  auto mlp = [&](const Mlp& m, const std::string& prefix) {
    add(gradients ? m.gradient_tensors(prefix) : m.to_tensors(prefix));
  };
  for (int c = 0; c < (spec_.shared_core ? 1 : 2); ++c) {
    const Tower& t = c == 0 ? actor_ : critic_;
    const std::string p = c == 0 ? "" : "critic_";
    if (t.encoder) mlp(*t.encoder, p + "encoder.");
    add((gradients ? t.core->gradients() : t.core->weights()).to_tensors(p + "core."));
  }
  mlp(actor_head_, "actor.");
  mlp(critic_head_, "critic.");
  if (spec_.action_kind == ActionKind::kContinuous) {
    const auto& v = gradients ? log_std_grad_ : log_std_;
    out["actor.log_std"] = Tensor({spec_.action_dim}, std::vector<float>(v.begin(), v.end()));
  }
  return out;
}

PolicyLearner::~PolicyLearner() = default;

void PolicyLearner::for_each_tower(const std::function<void(Tower&)>& fn) {
  if (spec_.shared_core) {
    fn(actor_);
  } else if (pool_) {
    pool_->run([&](int i) { fn(i == 0 ? actor_ : critic_); });
  } else {
    fn(actor_);
    fn(critic_);
  }
}

void PolicyLearner::tower_forward(Tower& t, int T, int B, std::span<const float> obs,
                                  std::span<const uint8_t> episode_start,
                                  std::span<const float> state0) {
  const auto tb = static_cast<size_t>(T) * B;
  std::span<const float> features = obs;
  if (t.encoder) {
    t.features.resize(tb * spec_.feature_dim());
    t.encoder->reserve(static_cast<int>(tb));
    t.encoder->forward(static_cast<int>(tb), obs, t.features);
    features = t.features;
  }
  t.y.resize(tb * spec_.hidden);
  t.core->forward(T, B, features, episode_start, state0, t.y);
}

void PolicyLearner::evaluate(int T, int B, std::span<const float> obs,
                             std::span<const float> actions, std::span<const uint8_t> episode_start,
                             std::span<const float> initial_state, std::span<float> log_probs,
                             std::span<float> entropies, std::span<float> values) {
  const auto tb = static_cast<size_t>(T) * B;
  const int adim = spec_.action_width();
  RECUR_CHECK_ARG(T >= 1 && B >= 1, "evaluate: T {} and B {} must be >= 1", T, B);
  RECUR_CHECK_ARG(obs.size() == tb * spec_.obs_dim && actions.size() == tb * adim &&
                      episode_start.size() == tb &&
                      initial_state.size() == static_cast<size_t>(B) * spec_.state_size() &&
                      log_probs.size() == tb && entropies.size() == tb && values.size() == tb,
                  "evaluate: buffer sizes do not match T {} B {} for this policy", T, B);
  t_ = T;
  b_ = B;
  actions_.assign(actions.begin(), actions.end());
  // Per slot the initial state is [actor core | critic core]; each tower takes its part.
  const auto cs = static_cast<size_t>(spec_.core_spec().state_size());
  for (int c = 0; c < (spec_.shared_core ? 1 : 2); ++c) {
    Tower& t = c == 0 ? actor_ : critic_;
    t.state0.resize(static_cast<size_t>(B) * cs);
    for (int b = 0; b < B; ++b)
      std::copy_n(initial_state.begin() + b * spec_.state_size() + c * cs, cs,
                  t.state0.begin() + b * cs);
  }
  for_each_tower([&](Tower& t) { tower_forward(t, T, B, obs, episode_start, t.state0); });
  actor_head_.reserve(static_cast<int>(tb));
  critic_head_.reserve(static_cast<int>(tb));
  head_out_.resize(tb * spec_.action_dim);
  actor_head_.forward(static_cast<int>(tb), actor_.y, head_out_);
  if (spec_.action_kind == ActionKind::kDiscrete) {
    Categorical dist(static_cast<int>(tb), spec_.action_dim, head_out_);
    dist.log_prob(actions, log_probs);
    dist.entropy(entropies);
  } else {
    DiagGaussian dist(static_cast<int>(tb), spec_.action_dim, head_out_, log_std_);
    dist.log_prob(actions, log_probs);
    dist.entropy(entropies);
  }
  critic_head_.forward(static_cast<int>(tb), spec_.shared_core ? actor_.y : critic_.y, values);
}

void PolicyLearner::tower_backward(Tower& t) {
  const auto tb = static_cast<size_t>(t_) * b_;
  if (t.encoder) {
    t.d_features.resize(tb * spec_.feature_dim());
    t.core->backward(t.d_y, t.d_features, {});
    t.encoder->backward(t.d_features);
  } else {
    t.core->backward(t.d_y, {}, {});
  }
}

void PolicyLearner::backward(std::span<const float> d_log_probs, std::span<const float> d_entropies,
                             std::span<const float> d_values) {
  const auto tb = static_cast<size_t>(t_) * b_;
  RECUR_CHECK_ARG(tb > 0, "backward called before evaluate");
  RECUR_CHECK_ARG(d_log_probs.size() == tb && d_entropies.size() == tb && d_values.size() == tb,
                  "backward: gradients must be (T, B) = {} values each", tb);
  // Heads.
  d_head_.resize(tb * spec_.action_dim);
  if (spec_.action_kind == ActionKind::kDiscrete) {
    Categorical dist(static_cast<int>(tb), spec_.action_dim, head_out_);
    dist.backward(actions_, d_log_probs, d_entropies, d_head_);
  } else {
    DiagGaussian dist(static_cast<int>(tb), spec_.action_dim, head_out_, log_std_);
    dist.backward(actions_, d_log_probs, d_entropies, d_head_, log_std_grad_);  // adds
  }
  actor_.d_y.resize(tb * spec_.hidden);
  actor_head_.backward(d_head_, actor_.d_y);
  AlignedVector<float>& dy_value = spec_.shared_core ? d_y_value_ : critic_.d_y;
  dy_value.resize(tb * spec_.hidden);
  critic_head_.backward(d_values, dy_value);
  if (spec_.shared_core) {
    for (size_t i = 0; i < actor_.d_y.size(); ++i) actor_.d_y[i] += dy_value[i];
  }
  for_each_tower([&](Tower& t) { tower_backward(t); });
}

void PolicyLearner::zero_gradients() {
  for (int c = 0; c < (spec_.shared_core ? 1 : 2); ++c) {
    Tower& t = c == 0 ? actor_ : critic_;
    if (t.encoder) t.encoder->zero_gradients();
    t.core->zero_gradients();
  }
  actor_head_.zero_gradients();
  critic_head_.zero_gradients();
  std::fill(log_std_grad_.begin(), log_std_grad_.end(), 0.0f);
}

std::vector<ParamGroup> PolicyLearner::parameter_groups() {
  std::vector<ParamGroup> g;
  for (int c = 0; c < (spec_.shared_core ? 1 : 2); ++c) {
    Tower& t = c == 0 ? actor_ : critic_;
    const std::string p = c == 0 ? "" : "critic_";
    if (t.encoder) g.push_back({p + "encoder", t.encoder->parameters(), t.encoder->gradients()});
    g.push_back({p + "core", t.core->parameters(), t.core->parameter_gradients(),
                 &t.core->parameter_layout()});
  }
  g.push_back({"actor", actor_head_.parameters(), actor_head_.gradients()});
  g.push_back({"critic", critic_head_.parameters(), critic_head_.gradients()});
  if (spec_.action_kind == ActionKind::kContinuous)
    g.push_back({"actor.log_std", log_std_, log_std_grad_});
  return g;
}

}  // namespace recur::policy
