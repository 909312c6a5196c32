// The CPU step executor: recur's LSTM block cell (TF's LSTMBlockCell idea) for the actor. Per
// layer and step, ONE GEMM over the concatenated [x, h] rows and ONE fused elementwise pass
// (bias, activations, cell update, clip); episode-start resets are a mask applied before the
// step. Weights and the state of all B slots stay inside across calls; a step allocates nothing
// (the GEMM is policy::gemm: LIBXSMM's kernel for the shape, generated on the first step, or
// Eigen tiled so that its packing buffers stay on the stack).
//
// Internal layout per layer: W (in_k + H, C) row-major, so that gates (B, C) = [x, h] (B, in_k+H)
// * W. Columns: LSTM/RNN C = G*H, gate blocks in canonical order, rows [W_ih^T ; W_hh^T]. GRU
// C = 4H: [r | z | n_x | n_h] where n_x has W_n^T in the x rows and zeros in the h rows and n_h
// the reverse, because the reset gate multiplies R_n h + b_Rn alone (cuDNN's GRU); the zeros cost
// a third more multiply-adds for GRU and keep the single GEMM. Biases are kept as given (both
// b_ih and b_hh, so the round trip to canonical is exact) and also pre-summed per column for the
// step. lstm_ln: W as LSTM's, no biases (bias stays zero and is not added); the fused pass
// normalizes each row's gate blocks and cell state (gate_math::lstm_ln_forward). minGRU (no
// recurrent weights): W is (in_k, 2H), columns [z | h~], the GEMM reads x alone;
// mingru_highway's W is (in_k, 3H), columns [z | h~ | p], and out_ carries the highway's output.
#pragma once

#include <vector>

#include "policy/aligned.h"
#include "policy/executor.h"

namespace recur::policy {

class CpuStepExecutor final : public StepExecutor {
 public:
  CpuStepExecutor(const CoreSpec& spec, int slots);

 private:
  void load_impl(const CanonicalWeights& weights) override;
  CanonicalWeights weights_impl() const override;
  void step_impl(std::span<const float> x, std::span<const uint8_t> episode_start,
                 std::span<float> h_out) override;
  void get_state_impl(int slot, std::span<float> out) const override;
  void set_state_impl(int slot, std::span<const float> state) override;
  void reset_impl(int slot) override;

  int rows(int k) const;  // K_k: in_k + H, or in_k for minGRU (its gates do not read h)
  int columns() const;    // C

  struct Layer {
    AlignedVector<float> w;                       // (K_k, C) row-major
    AlignedVector<float> bias;                    // (C) pre-summed biases used by the step
    AlignedVector<float> bias_ih;                 // (G*H) as loaded
    AlignedVector<float> bias_hh;                 // (G*H) as loaded; empty for minGRU
    AlignedVector<float> norm_weight, norm_bias;  // (5H) lstm_ln's LayerNorm; else empty
  };
  std::vector<Layer> layers_;
  AlignedVector<float> h_, c_;  // (L, B, H) state
  AlignedVector<float> xh_;     // (B, max_in + H) workspace: the GEMM's left operand
  AlignedVector<float> gates_;  // (B, C) workspace
  AlignedVector<float> out_;    // (B, H): a minGRU stack's running output out_k; else empty
};

}  // namespace recur::policy
