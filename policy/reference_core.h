// The reference executor: the equations of core_spec.h computed op by op with plain loops, as
// TF's BasicLSTMCell does (one matrix-vector product per gate and input, then separate
// elementwise ops, each into its own temporary). Templated on the scalar: the double instance is
// the oracle of every executor test; the float instance is the "vanilla cell" row of
// `recur bench rnn`. Slow on purpose; never used for training.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "policy/canonical_weights.h"

namespace recur::policy {

template <typename S>
class ReferenceCore {
 public:
  explicit ReferenceCore(const CanonicalWeights& w) : spec_(w.spec) {
    for (const auto& l : w.layers) {
      Layer d;
      d.w_ih.assign(l.weight_ih.begin(), l.weight_ih.end());
      d.w_hh.assign(l.weight_hh.begin(), l.weight_hh.end());
      d.b_ih.assign(l.bias_ih.begin(), l.bias_ih.end());
      d.b_hh.assign(l.bias_hh.begin(), l.bias_hh.end());
      d.n_w.assign(l.norm_weight.begin(), l.norm_weight.end());
      d.n_b.assign(l.norm_bias.begin(), l.norm_bias.end());
      layers_.push_back(std::move(d));
    }
    const auto h = static_cast<size_t>(spec_.hidden);
    for (auto* v : {&xw_, &hr_, &pre_, &act_, &tmp_, &tmp2_})
      v->assign(h * static_cast<size_t>(spec_.gates()), S(0));
    in_.assign(static_cast<size_t>(std::max(spec_.input, spec_.hidden)), S(0));
  }

  const CoreSpec& spec() const { return spec_; }

  // One step for B slots: x (B, input); state (B, S) updated in place (zeroed first where
  // episode_start is 1); h_out (B, H).
  void step(int B, const S* x, const uint8_t* episode_start, S* state, S* h_out) {
    const int H = spec_.hidden, L = spec_.layers, ss = spec_.state_size();
    for (int b = 0; b < B; ++b) {
      S* st = state + static_cast<size_t>(b) * ss;
      if (episode_start[b]) std::fill(st, st + ss, S(0));
      std::copy(x + static_cast<size_t>(b) * spec_.input,
                x + static_cast<size_t>(b + 1) * spec_.input, in_.begin());
      for (int k = 0; k < L; ++k) {
        S* h = st + k * H;
        S* c = has_cell_state(spec_.cell) ? st + (L + k) * H : nullptr;
        cell(k, in_.data(), h, c);
        if (k > 0 && has_residual_stack(spec_.cell)) {
          for (int j = 0; j < H; ++j) in_[j] += h[j];  // out_k = h_k + out_{k-1}
        } else if (has_highway_stack(spec_.cell)) {
          // out_k = s h_k + (1 - s) out_{k-1}, s from the third block; out_{-1} = 0.
          for (int j = 0; j < H; ++j) {
            const S s = sigmoid(xw_[static_cast<size_t>(2 * H + j)]);
            const S below = k == 0 ? S(0) : in_[static_cast<size_t>(j)];
            in_[static_cast<size_t>(j)] = s * h[j] + (S(1) - s) * below;
          }
        } else {
          std::copy(h, h + H, in_.begin());
        }
      }
      std::copy(in_.begin(), in_.begin() + H, h_out + static_cast<size_t>(b) * H);
    }
  }

  // A whole (T, B) sequence by repeated steps: x (T, B, in), episode_start (T, B), state (B, S)
  // (initial in, final out), y (T, B, H).
  void forward(int T, int B, const S* x, const uint8_t* episode_start, S* state, S* y) {
    for (int t = 0; t < T; ++t)
      step(B, x + static_cast<size_t>(t) * B * spec_.input,
           episode_start + static_cast<size_t>(t) * B, state,
           y + static_cast<size_t>(t) * B * spec_.hidden);
  }

 private:
  struct Layer {
    std::vector<S> w_ih, w_hh, b_ih, b_hh, n_w, n_b;
  };

  // Layer norm of v[0..H) in place with group q's gain and shift (core_spec.h, LSTM_LN): two
  // passes (mean, then the biased variance of the centred values), as TF's moments.
  void layer_norm(const Layer& l, int q, S* v) const {
    const int H = spec_.hidden;
    S mean = S(0);
    for (int j = 0; j < H; ++j) mean += v[j];
    mean /= S(H);
    S var = S(0);
    for (int j = 0; j < H; ++j) var += (v[j] - mean) * (v[j] - mean);
    var /= S(H);
    const S inv = S(1) / std::sqrt(var + static_cast<S>(spec_.norm_epsilon));
    for (int j = 0; j < H; ++j)
      v[j] = (v[j] - mean) * inv * l.n_w[static_cast<size_t>(q * H + j)] +
             l.n_b[static_cast<size_t>(q * H + j)];
  }

  static S sigmoid(S v) { return S(1) / (S(1) + std::exp(-v)); }
  S clip(S v) const {
    if (spec_.cell_clip <= 0) return v;
    const S bound = static_cast<S>(spec_.cell_clip);
    return std::clamp(v, -bound, bound);
  }

  // out[g*H + j] = sum_i W[(g*H + j), i] * v[i], one gate block at a time.
  static void gate_matvec(const S* w, int rows, int cols, const S* v, S* out) {
    for (int r = 0; r < rows; ++r) {
      S acc = S(0);
      for (int i = 0; i < cols; ++i) acc += w[static_cast<size_t>(r) * cols + i] * v[i];
      out[r] = acc;
    }
  }

  void cell(int k, const S* x, S* h, S* c) {
    const Layer& l = layers_[static_cast<size_t>(k)];
    const int H = spec_.hidden, G = spec_.gates(), in = spec_.layer_input(k);
    const bool recurrent = has_recurrent_weights(spec_.cell);
    for (int g = 0; g < G; ++g) {  // per gate, as a per-gate cell would
      gate_matvec(l.w_ih.data() + static_cast<size_t>(g) * H * in, H, in, x, xw_.data() + g * H);
      if (recurrent)
        gate_matvec(l.w_hh.data() + static_cast<size_t>(g) * H * H, H, H, h, hr_.data() + g * H);
    }
    if (has_gate_biases(spec_.cell)) {
      for (int r = 0; r < G * H; ++r) xw_[r] += l.b_ih[r];
      if (recurrent)
        for (int r = 0; r < G * H; ++r) hr_[r] += l.b_hh[r];
    }
    switch (spec_.cell) {
      case CellType::kLstm: {
        for (int r = 0; r < G * H; ++r) pre_[r] = xw_[r] + hr_[r];
        for (int j = 0; j < H; ++j) act_[j] = sigmoid(pre_[j]);                    // i
        for (int j = 0; j < H; ++j) act_[H + j] = sigmoid(pre_[H + j]);            // f
        for (int j = 0; j < H; ++j) act_[2 * H + j] = std::tanh(pre_[2 * H + j]);  // g
        for (int j = 0; j < H; ++j) act_[3 * H + j] = sigmoid(pre_[3 * H + j]);    // o
        // cuDNN's MINMAX clip: the state stays raw and is clipped where it is read.
        for (int j = 0; j < H; ++j) tmp_[j] = act_[H + j] * clip(c[j]);
        for (int j = 0; j < H; ++j) tmp2_[j] = act_[j] * act_[2 * H + j];
        for (int j = 0; j < H; ++j) c[j] = tmp_[j] + tmp2_[j];
        for (int j = 0; j < H; ++j) tmp_[j] = std::tanh(clip(c[j]));
        for (int j = 0; j < H; ++j) h[j] = act_[3 * H + j] * tmp_[j];
        break;
      }
      case CellType::kGru: {
        for (int j = 0; j < H; ++j) act_[j] = sigmoid(xw_[j] + hr_[j]);              // r
        for (int j = 0; j < H; ++j) act_[H + j] = sigmoid(xw_[H + j] + hr_[H + j]);  // z
        for (int j = 0; j < H; ++j) tmp_[j] = act_[j] * hr_[2 * H + j];
        for (int j = 0; j < H; ++j) act_[2 * H + j] = std::tanh(xw_[2 * H + j] + tmp_[j]);  // n
        for (int j = 0; j < H; ++j)
          h[j] = (S(1) - act_[H + j]) * act_[2 * H + j] + act_[H + j] * h[j];
        break;
      }
      case CellType::kRnnTanh:
        for (int j = 0; j < H; ++j) h[j] = std::tanh(xw_[j] + hr_[j]);
        break;
      case CellType::kRnnRelu:
        for (int j = 0; j < H; ++j) h[j] = std::max(xw_[j] + hr_[j], S(0));
        break;
      case CellType::kLstmLn: {  // no biases; each gate block normalized on its own
        for (int r = 0; r < G * H; ++r) pre_[r] = xw_[r] + hr_[r];
        for (int q = 0; q < 4; ++q) layer_norm(l, q, pre_.data() + q * H);
        for (int j = 0; j < H; ++j) act_[j] = sigmoid(pre_[j]);                    // i
        for (int j = 0; j < H; ++j) act_[H + j] = sigmoid(pre_[H + j]);            // f
        for (int j = 0; j < H; ++j) act_[2 * H + j] = std::tanh(pre_[2 * H + j]);  // g
        for (int j = 0; j < H; ++j) act_[3 * H + j] = sigmoid(pre_[3 * H + j]);    // o
        for (int j = 0; j < H; ++j) tmp_[j] = act_[H + j] * c[j];
        for (int j = 0; j < H; ++j) tmp2_[j] = act_[j] * act_[2 * H + j];
        for (int j = 0; j < H; ++j) c[j] = tmp_[j] + tmp2_[j];
        layer_norm(l, 4, c);  // the normalized c is the state carried on
        for (int j = 0; j < H; ++j) tmp_[j] = std::tanh(c[j]);
        for (int j = 0; j < H; ++j) h[j] = act_[3 * H + j] * tmp_[j];
        break;
      }
      case CellType::kMinGru:         // no R: xw_ alone; h' = (1 - z) h + z h~
      case CellType::kMinGruHighway:  // the same; its third block is the highway's (step())
        for (int j = 0; j < H; ++j) act_[j] = sigmoid(xw_[j]);  // z
        for (int j = 0; j < H; ++j) h[j] = (S(1) - act_[j]) * h[j] + act_[j] * xw_[H + j];
        break;
    }
  }

  CoreSpec spec_;
  std::vector<Layer> layers_;
  std::vector<S> xw_, hr_, pre_, act_, tmp_, tmp2_, in_;
};

}  // namespace recur::policy
