#include "policy/cpu/cpu_sequence_executor.h"

namespace recur::policy {

CpuSequenceExecutor::CpuSequenceExecutor(const CoreSpec& spec)
    : SequenceExecutor(spec), engine_(spec), layout_(canonical_layout(spec)) {}

void CpuSequenceExecutor::load_impl(const CanonicalWeights& weights) {
  canonical_to_engine(weights, engine_, engine_.params());
}

CanonicalWeights CpuSequenceExecutor::weights_impl() const {
  return engine_to_canonical(engine_, engine_.params());
}

void CpuSequenceExecutor::forward_impl(int T, int B, std::span<const float> x,
                                       std::span<const uint8_t> episode_start,
                                       std::span<const float> initial_state, std::span<float> y,
                                       std::span<float> final_state) {
  engine_.forward(T, B, x.data(), episode_start.data(), initial_state.data(), y.data(),
                  final_state.empty() ? nullptr : final_state.data());
}

void CpuSequenceExecutor::backward_impl(std::span<const float> dy, std::span<float> dx,
                                        std::span<float> d_initial_state) {
  engine_.backward(dy.data(), dx.empty() ? nullptr : dx.data(),
                   d_initial_state.empty() ? nullptr : d_initial_state.data());
}

void CpuSequenceExecutor::zero_gradients_impl() {
  std::fill(engine_.grads().begin(), engine_.grads().end(), 0.0f);
}

CanonicalWeights CpuSequenceExecutor::gradients_impl() const {
  return engine_to_canonical(engine_, engine_.grads());
}

}  // namespace recur::policy
