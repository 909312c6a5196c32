#include "policy/executor.h"

#include "core/error.h"

namespace recur::policy {
namespace {
void check_spec(const CoreSpec& have, const CanonicalWeights& w, const char* who) {
  RECUR_CHECK_ARG(w.spec == have,
                  "{}: weights are for a {} core (input {}, hidden {}, layers {}), the executor "
                  "runs {} (input {}, hidden {}, layers {})",
                  who, to_string(w.spec.cell), w.spec.input, w.spec.hidden, w.spec.layers,
                  to_string(have.cell), have.input, have.hidden, have.layers);
  RECUR_CHECK_ARG(w.layers.size() == static_cast<size_t>(have.layers), "{}: {} layers of weights",
                  who, w.layers.size());
}
}  // namespace

StepExecutor::StepExecutor(const CoreSpec& spec, int slots) : spec_(spec), slots_(slots) {
  spec.validate();
  RECUR_CHECK_ARG(slots >= 1, "StepExecutor needs at least one slot, got {}", slots);
}

void StepExecutor::load(const CanonicalWeights& weights) {
  check_spec(spec_, weights, "StepExecutor::load");
  load_impl(weights);
}

CanonicalWeights StepExecutor::weights() const {
  return weights_impl();
}

void StepExecutor::step(std::span<const float> x, std::span<const uint8_t> episode_start,
                        std::span<float> h_out) {
  const auto b = static_cast<size_t>(slots_);
  RECUR_CHECK_ARG(x.size() == b * spec_.input, "step: x has {} floats, expected B {} x input {}",
                  x.size(), slots_, spec_.input);
  RECUR_CHECK_ARG(episode_start.size() == b, "step: episode_start has {} flags, expected B {}",
                  episode_start.size(), slots_);
  RECUR_CHECK_ARG(h_out.size() == b * spec_.hidden,
                  "step: h_out has {} floats, expected B {} x hidden {}", h_out.size(), slots_,
                  spec_.hidden);
  step_impl(x, episode_start, h_out);
}

void StepExecutor::get_state(int slot, std::span<float> out) const {
  RECUR_CHECK_ARG(slot >= 0 && slot < slots_, "slot {} outside [0, {})", slot, slots_);
  RECUR_CHECK_ARG(out.size() == static_cast<size_t>(spec_.state_size()),
                  "get_state: buffer holds {} floats, the state has {}", out.size(),
                  spec_.state_size());
  get_state_impl(slot, out);
}

void StepExecutor::set_state(int slot, std::span<const float> state) {
  RECUR_CHECK_ARG(slot >= 0 && slot < slots_, "slot {} outside [0, {})", slot, slots_);
  RECUR_CHECK_ARG(state.size() == static_cast<size_t>(spec_.state_size()),
                  "set_state: {} floats given, the state has {}", state.size(), spec_.state_size());
  set_state_impl(slot, state);
}

void StepExecutor::get_states(std::span<float> out) const {
  const auto s = static_cast<size_t>(spec_.state_size());
  RECUR_CHECK_ARG(out.size() == s * slots_, "get_states: buffer holds {} floats, expected {}",
                  out.size(), s * slots_);
  for (int b = 0; b < slots_; ++b) get_state_impl(b, out.subspan(b * s, s));
}

void StepExecutor::set_states(std::span<const float> states) {
  const auto s = static_cast<size_t>(spec_.state_size());
  RECUR_CHECK_ARG(states.size() == s * slots_, "set_states: {} floats given, expected {}",
                  states.size(), s * slots_);
  for (int b = 0; b < slots_; ++b) set_state_impl(b, states.subspan(b * s, s));
}

void StepExecutor::reset(int slot) {
  RECUR_CHECK_ARG(slot >= 0 && slot < slots_, "slot {} outside [0, {})", slot, slots_);
  reset_impl(slot);
}

SequenceExecutor::SequenceExecutor(const CoreSpec& spec) : spec_(spec) {
  spec.validate();
}

void SequenceExecutor::load(const CanonicalWeights& weights) {
  check_spec(spec_, weights, "SequenceExecutor::load");
  load_impl(weights);
}

CanonicalWeights SequenceExecutor::weights() const {
  return weights_impl();
}

void SequenceExecutor::forward(int T, int B, std::span<const float> x,
                               std::span<const uint8_t> episode_start,
                               std::span<const float> initial_state, std::span<float> y,
                               std::span<float> final_state) {
  RECUR_CHECK_ARG(T >= 1 && B >= 1, "forward: T {} and B {} must be >= 1", T, B);
  const auto tb = static_cast<size_t>(T) * B;
  const auto s = static_cast<size_t>(spec_.state_size());
  RECUR_CHECK_ARG(x.size() == tb * spec_.input,
                  "forward: x has {} floats, expected T {} x B {} x "
                  "input {}",
                  x.size(), T, B, spec_.input);
  RECUR_CHECK_ARG(episode_start.size() == tb, "forward: episode_start has {} flags, expected {}",
                  episode_start.size(), tb);
  RECUR_CHECK_ARG(initial_state.size() == s * B,
                  "forward: initial_state has {} floats, expected B {} x state {}",
                  initial_state.size(), B, s);
  RECUR_CHECK_ARG(y.size() == tb * spec_.hidden, "forward: y has {} floats, expected {}", y.size(),
                  tb * spec_.hidden);
  RECUR_CHECK_ARG(final_state.empty() || final_state.size() == s * B,
                  "forward: final_state has {} floats, expected {} or none", final_state.size(),
                  s * B);
  forward_impl(T, B, x, episode_start, initial_state, y, final_state);
  last_t_ = T;
  last_b_ = B;
}

void SequenceExecutor::backward(std::span<const float> dy, std::span<float> dx,
                                std::span<float> d_initial_state) {
  RECUR_CHECK_ARG(last_t_ > 0, "backward called before forward");
  const auto tb = static_cast<size_t>(last_t_) * last_b_;
  RECUR_CHECK_ARG(dy.size() == tb * spec_.hidden, "backward: dy has {} floats, expected {}",
                  dy.size(), tb * spec_.hidden);
  RECUR_CHECK_ARG(dx.empty() || dx.size() == tb * spec_.input,
                  "backward: dx has {} floats, expected {} or none", dx.size(), tb * spec_.input);
  RECUR_CHECK_ARG(d_initial_state.empty() ||
                      d_initial_state.size() == static_cast<size_t>(last_b_) * spec_.state_size(),
                  "backward: d_initial_state has {} floats, expected {} or none",
                  d_initial_state.size(), static_cast<size_t>(last_b_) * spec_.state_size());
  backward_impl(dy, dx, d_initial_state);
}

void SequenceExecutor::zero_gradients() {
  zero_gradients_impl();
}

CanonicalWeights SequenceExecutor::gradients() const {
  return gradients_impl();
}

}  // namespace recur::policy
