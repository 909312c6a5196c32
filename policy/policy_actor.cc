#include "policy/policy_actor.h"

#include <algorithm>

#include "core/error.h"
#include "policy/canonical_weights.h"
#include "policy/distributions.h"

#ifdef RECUR_WITH_CUDA
#include "policy/cuda/cuda_policy_actor.h"
#endif

namespace recur::policy {

#ifndef RECUR_WITH_CUDA
// A build without CUDA never creates one (the constructor below takes the CPU path, whose
// make_step_executor throws for Device::kCuda); this definition only lets cuda_ be destroyed and
// the delegating calls compile.
class CudaPolicyActor {
 public:
  [[noreturn]] static void unreachable() {
    detail::throw_internal(__FILE__, __LINE__, "CudaPolicyActor in a build without CUDA");
  }
  void load_weights(const TensorMap&) { unreachable(); }
  void act(std::span<const float>, std::span<const uint8_t>, Rng&, bool, std::span<float>,
           std::span<float>, std::span<float>) {
    unreachable();
  }
  void peek_values(std::span<const float>, std::span<const uint8_t>, std::span<float>) {
    unreachable();
  }
  void get_states(std::span<float>) const { unreachable(); }
  void set_states(std::span<const float>) { unreachable(); }
  void reset(int) { unreachable(); }
};
#endif

PolicyActor::PolicyActor(const PolicySpec& spec, int slots, const Placement& placement)
    : PolicyActor(spec, slots, placement, 1) {}

PolicyActor::PolicyActor(const PolicySpec& spec, int slots, const Placement& placement, int groups)
    : spec_(spec),
      slots_(slots),
      normalizer_(spec.obs_dim, spec.normalizer_config()),
      actor_head_(spec.actor_head_spec()),
      critic_head_(spec.critic_head_spec()) {
  spec.validate();
  RECUR_CHECK_ARG(slots >= 1, "PolicyActor needs at least one slot, got {}", slots);
  RECUR_CHECK_ARG(groups >= 1 && groups <= slots,
                  "PolicyActor: {} groups of {} slots; every group needs at least one slot", groups,
                  slots);
  const auto b = static_cast<size_t>(slots);
  nobs_.assign(b * spec.obs_dim, 0.0f);
  if (groups > 1) {
    for (int g = 0; g < groups; ++g)
      groups_.push_back(std::make_unique<PolicyActor>(
          spec, static_cast<int>(int64_t{g + 1} * slots / groups - int64_t{g} * slots / groups),
          placement));
    return;
  }
#ifdef RECUR_WITH_CUDA
  if (placement.device == Device::kCuda) {
    cuda_ = std::make_unique<CudaPolicyActor>(spec, slots, placement.step);
    return;
  }
#endif
  for (int c = 0; c < (spec.shared_core ? 1 : 2); ++c) {
    Tower& t = c == 0 ? actor_ : critic_;
    if (!spec.encoder.empty()) {
      t.encoder = std::make_unique<Mlp>(spec.encoder_spec());
      t.encoder->reserve(slots);
    }
    t.core = make_step_executor(spec.core_spec(), slots, placement);
    t.features.assign(b * spec.feature_dim(), 0.0f);
    t.h.assign(b * spec.hidden, 0.0f);
  }
  actor_head_.reserve(slots);
  critic_head_.reserve(slots);
  log_std_.assign(static_cast<size_t>(spec.action_dim), 0.0f);
  head_out_.assign(b * static_cast<size_t>(squash_head_width(spec.squash, spec.action_dim)), 0.0f);
  saved_states_.assign(b * spec.state_size(), 0.0f);
}

PolicyActor::~PolicyActor() = default;
PolicyActor::PolicyActor(PolicyActor&&) noexcept = default;
PolicyActor& PolicyActor::operator=(PolicyActor&&) noexcept = default;

void PolicyActor::load(const TensorMap& tensors) {
  normalizer_.load_tensors(tensors, "obs_norm.");
  load_weights(tensors);
}

PolicyActor& PolicyActor::group(int g) {
  RECUR_CHECK_ARG(g >= 0 && g < groups(), "PolicyActor::group({}) of {} groups", g, groups());
  return groups_.empty() ? *this : *groups_[static_cast<size_t>(g)];
}

void PolicyActor::load_weights(const TensorMap& tensors) {
  if (!groups_.empty()) {
    for (auto& g : groups_) g->load_weights(tensors);
    return;
  }
  if (cuda_) return cuda_->load_weights(tensors);
  Mlp* const encoders[2] = {actor_.encoder.get(), critic_.encoder.get()};
  StepExecutor* const cores[2] = {actor_.core.get(), critic_.core.get()};
  load_network(spec_, tensors, encoders, cores, actor_head_, critic_head_, log_std_);
}

void PolicyActor::run_tower(Tower& t, std::span<const uint8_t> episode_start) {
  if (t.encoder) {
    t.encoder->forward(slots_, nobs_, t.features);
    t.core->step(t.features, episode_start, t.h);
  } else {
    t.core->step(nobs_, episode_start, t.h);
  }
}

void PolicyActor::act(std::span<const float> obs, std::span<const uint8_t> episode_start, Rng& rng,
                      bool deterministic, std::span<float> actions, std::span<float> log_probs,
                      std::span<float> values) {
  const auto b = static_cast<size_t>(slots_);
  RECUR_CHECK_ARG(obs.size() == b * spec_.obs_dim, "act: obs has {} floats, expected {} x {}",
                  obs.size(), slots_, spec_.obs_dim);
  if (!groups_.empty()) {
    const auto a = static_cast<size_t>(spec_.action_width());
    RECUR_CHECK_ARG(actions.size() == b * a && log_probs.size() == b && values.size() == b &&
                        episode_start.size() == b,
                    "act: output buffers have the wrong sizes for {} slots", slots_);
    for (int g = 0; g < groups(); ++g)
      act_group(g, rows(obs, g, spec_.obs_dim), rows(episode_start, g, 1), rng, deterministic,
                rows(actions, g, a), rows(log_probs, g, 1), rows(values, g, 1));
    return;
  }
  normalizer_.normalize(slots_, obs, nobs_);
  act_normalized(episode_start, rng, deterministic, actions, log_probs, values);
}

void PolicyActor::act_group(int g, std::span<const float> obs,
                            std::span<const uint8_t> episode_start, Rng& rng, bool deterministic,
                            std::span<float> actions, std::span<float> log_probs,
                            std::span<float> values) {
  if (groups_.empty()) {
    RECUR_CHECK_ARG(g == 0, "act_group({}) on an actor of one group", g);
    return act(obs, episode_start, rng, deterministic, actions, log_probs, values);
  }
  const int n = group(g).slots_;
  RECUR_CHECK_ARG(obs.size() == static_cast<size_t>(n) * spec_.obs_dim &&
                      episode_start.size() == static_cast<size_t>(n),
                  "act_group({}): obs must be ({}, {}) and episode_start ({})", g, n, spec_.obs_dim,
                  n);
  normalize_group(g, obs).act_normalized(episode_start, rng, deterministic, actions, log_probs,
                                         values);
}

PolicyActor& PolicyActor::normalize_group(int g, std::span<const float> obs) {
  PolicyActor& part = group(g);
  const auto nobs = rows(std::span<float>(nobs_), g, spec_.obs_dim);
  normalizer_.normalize(part.slots_, obs, nobs);
  std::copy(nobs.begin(), nobs.end(), part.nobs_.begin());
  return part;
}

void PolicyActor::act_normalized(std::span<const uint8_t> episode_start, Rng& rng,
                                 bool deterministic, std::span<float> actions,
                                 std::span<float> log_probs, std::span<float> values) {
  const auto b = static_cast<size_t>(slots_);
  RECUR_CHECK_ARG(actions.size() == b * (spec_.action_kind == ActionKind::kDiscrete
                                             ? 1
                                             : static_cast<size_t>(spec_.action_dim)) &&
                      log_probs.size() == b && values.size() == b,
                  "act: output buffers have the wrong sizes for {} slots", slots_);
  if (cuda_)
    return cuda_->act(nobs_, episode_start, rng, deterministic, actions, log_probs, values);
  run_tower(actor_, episode_start);
  actor_head_.forward(slots_, actor_.h, head_out_);
  if (spec_.action_kind == ActionKind::kDiscrete) {
    Categorical dist(slots_, spec_.action_dim, head_out_);
    deterministic ? dist.mode(actions) : dist.sample(rng, actions);
    dist.log_prob(actions, log_probs);
  } else if (spec_.squash == Squash::kTanhGaussian) {
    TanhGaussian dist(slots_, spec_.action_dim, head_out_, spec_.action_low, spec_.action_high);
    deterministic ? dist.mode(actions, log_probs) : dist.sample(rng, actions, log_probs);
  } else if (spec_.squash == Squash::kTanh) {
    TanhDeterministic dist(slots_, spec_.action_dim, head_out_, spec_.action_low, spec_.action_high,
                           spec_.exploration_noise);
    deterministic ? dist.mode(actions) : dist.sample(rng, actions);
    std::fill(log_probs.begin(), log_probs.end(), 0.0f);  // no density: a deterministic policy
  } else {
    DiagGaussian dist(slots_, spec_.action_dim, head_out_, log_std_);
    deterministic ? dist.mode(actions) : dist.sample(rng, actions);
    dist.log_prob(actions, log_probs);
  }
  if (spec_.shared_core) {
    critic_head_.forward(slots_, actor_.h, values);
  } else {
    run_tower(critic_, episode_start);
    critic_head_.forward(slots_, critic_.h, values);
  }
}

void PolicyActor::peek_values(std::span<const float> obs, std::span<const uint8_t> episode_start,
                              std::span<float> values) {
  const auto b = static_cast<size_t>(slots_);
  RECUR_CHECK_ARG(
      obs.size() == b * spec_.obs_dim && values.size() == b && episode_start.size() == b,
      "peek_values: obs must be ({}, {}), values and episode_start ({})", slots_, spec_.obs_dim,
      slots_);
  if (!groups_.empty()) {
    for (int g = 0; g < groups(); ++g)
      peek_group(g, rows(obs, g, spec_.obs_dim), rows(episode_start, g, 1), rows(values, g, 1));
    return;
  }
  normalizer_.normalize(slots_, obs, nobs_);
  peek_normalized(episode_start, values);
}

void PolicyActor::peek_group(int g, std::span<const float> obs,
                             std::span<const uint8_t> episode_start, std::span<float> values) {
  if (groups_.empty()) {
    RECUR_CHECK_ARG(g == 0, "peek_group({}) on an actor of one group", g);
    return peek_values(obs, episode_start, values);
  }
  const auto n = static_cast<size_t>(group(g).slots_);
  RECUR_CHECK_ARG(
      obs.size() == n * spec_.obs_dim && values.size() == n && episode_start.size() == n,
      "peek_group({}): obs must be ({}, {}), values and episode_start ({})", g, n, spec_.obs_dim,
      n);
  normalize_group(g, obs).peek_normalized(episode_start, values);
}

void PolicyActor::peek_normalized(std::span<const uint8_t> episode_start, std::span<float> values) {
  if (cuda_) return cuda_->peek_values(nobs_, episode_start, values);
  get_states(saved_states_);
  Tower& t = spec_.shared_core ? actor_ : critic_;
  run_tower(t, episode_start);
  critic_head_.forward(slots_, t.h, values);
  set_states(saved_states_);
}

void PolicyActor::get_states(std::span<float> out) const {
  const auto s = static_cast<size_t>(spec_.state_size());
  if (!groups_.empty()) {
    RECUR_CHECK_ARG(out.size() == s * slots_, "get_states: {} floats, expected {}", out.size(),
                    s * slots_);
    for (int g = 0; g < groups(); ++g) groups_[static_cast<size_t>(g)]->get_states(rows(out, g, s));
    return;
  }
  if (cuda_) return cuda_->get_states(out);
  const auto cs = static_cast<size_t>(spec_.core_spec().state_size());
  RECUR_CHECK_ARG(out.size() == s * slots_, "get_states: {} floats, expected {}", out.size(),
                  s * slots_);
  for (int b = 0; b < slots_; ++b) {
    actor_.core->get_state(b, out.subspan(b * s, cs));
    if (!spec_.shared_core) critic_.core->get_state(b, out.subspan(b * s + cs, cs));
  }
}

void PolicyActor::set_states(std::span<const float> states) {
  const auto s = static_cast<size_t>(spec_.state_size());
  if (!groups_.empty()) {
    RECUR_CHECK_ARG(states.size() == s * slots_, "set_states: {} floats, expected {}",
                    states.size(), s * slots_);
    for (int g = 0; g < groups(); ++g)
      groups_[static_cast<size_t>(g)]->set_states(rows(states, g, s));
    return;
  }
  if (cuda_) return cuda_->set_states(states);
  const auto cs = static_cast<size_t>(spec_.core_spec().state_size());
  RECUR_CHECK_ARG(states.size() == s * slots_, "set_states: {} floats, expected {}", states.size(),
                  s * slots_);
  for (int b = 0; b < slots_; ++b) {
    actor_.core->set_state(b, states.subspan(b * s, cs));
    if (!spec_.shared_core) critic_.core->set_state(b, states.subspan(b * s + cs, cs));
  }
}

void PolicyActor::reset(int slot) {
  if (!groups_.empty()) {
    RECUR_CHECK_ARG(slot >= 0 && slot < slots_, "reset({}) of {} slots", slot, slots_);
    int g = 0;
    while (slot >= group_begin(g + 1)) ++g;
    return groups_[static_cast<size_t>(g)]->reset(slot - group_begin(g));
  }
  if (cuda_) return cuda_->reset(slot);
  actor_.core->reset(slot);
  if (!spec_.shared_core) critic_.core->reset(slot);
}

}  // namespace recur::policy
