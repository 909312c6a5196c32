// The CPU sequence executor (the learner's fused layer on a CPU): SequenceEngine<float> behind
// the SequenceExecutor interface. Its parameter layout is the canonical one, flattened.
#pragma once

#include "policy/convert/flat_layout.h"
#include "policy/cpu/sequence_engine.h"
#include "policy/executor.h"

namespace recur::policy {

class CpuSequenceExecutor final : public SequenceExecutor {
 public:
  explicit CpuSequenceExecutor(const CoreSpec& spec);

  std::span<float> parameters() override { return engine_.params(); }
  std::span<float> parameter_gradients() override { return engine_.grads(); }
  const FlatLayout& parameter_layout() const override { return layout_; }

 private:
  void load_impl(const CanonicalWeights& weights) override;
  CanonicalWeights weights_impl() const override;
  void forward_impl(int T, int B, std::span<const float> x, std::span<const uint8_t> episode_start,
                    std::span<const float> initial_state, std::span<float> y,
                    std::span<float> final_state) override;
  void backward_impl(std::span<const float> dy, std::span<float> dx,
                     std::span<float> d_initial_state) override;
  void zero_gradients_impl() override;
  CanonicalWeights gradients_impl() const override;

  SequenceEngine<float> engine_;
  FlatLayout layout_;  // canonical: the engine's layout is the canonical flat order
};

// Flattens canonical weights into / reads them back from the engine layout (shared with tests).
template <typename S>
void canonical_to_engine(const CanonicalWeights& w, SequenceEngine<S>& engine,
                         AlignedVector<S>& flat) {
  for (int k = 0; k < w.spec.layers; ++k) {
    const auto& l = w.layers[static_cast<size_t>(k)];
    const auto& o = engine.offsets(k);
    std::copy(l.weight_ih.begin(), l.weight_ih.end(), flat.begin() + o.w_ih);
    std::copy(l.weight_hh.begin(), l.weight_hh.end(), flat.begin() + o.w_hh);
    std::copy(l.bias_ih.begin(), l.bias_ih.end(), flat.begin() + o.b_ih);
    std::copy(l.bias_hh.begin(), l.bias_hh.end(), flat.begin() + o.b_hh);
    std::copy(l.norm_weight.begin(), l.norm_weight.end(), flat.begin() + o.n_w);
    std::copy(l.norm_bias.begin(), l.norm_bias.end(), flat.begin() + o.n_b);
  }
}

template <typename S>
CanonicalWeights engine_to_canonical(const SequenceEngine<S>& engine,
                                     const AlignedVector<S>& flat) {
  CanonicalWeights w = CanonicalWeights::zeros(engine.spec());
  for (int k = 0; k < w.spec.layers; ++k) {
    auto& l = w.layers[static_cast<size_t>(k)];
    const auto& o = engine.offsets(k);
    auto copy = [&](size_t off, std::vector<float>& dst) {
      for (size_t i = 0; i < dst.size(); ++i) dst[i] = static_cast<float>(flat[off + i]);
    };
    copy(o.w_ih, l.weight_ih);
    copy(o.w_hh, l.weight_hh);
    copy(o.b_ih, l.bias_ih);
    copy(o.b_hh, l.bias_hh);
    copy(o.n_w, l.norm_weight);
    copy(o.n_b, l.norm_bias);
  }
  return w;
}

}  // namespace recur::policy
