// The fused elementwise gate math of core_spec.h for B rows at once, vectorized with Eigen
// arrays (logistic and tanh have SIMD implementations for float and double). Shared by the CPU
// step executor and the sequence engine, so both round identically. Matrices are row-major
// (B, width) views; gate blocks are column ranges of H.
#pragma once

#include <cmath>

#include "policy/eigen.h"
#include "policy/lane_sum.h"

namespace recur::policy::gate_math {

template <typename S>
using RowMat = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename S>
using View = Eigen::Ref<RowMat<S>, 0, Eigen::OuterStride<>>;
template <typename S>
using CView = Eigen::Ref<const RowMat<S>, 0, Eigen::OuterStride<>>;

// gates (B, 4H): pre-activations [i f g o] in, activations out. c (B, H) is the previous cell
// state in and the new one out, both raw: with clip > 0 the state is clipped where it is read
// (cuDNN's MINMAX, core_spec.h), c' = f * clip(c) + i * g and h = o * tanh(clip(c')). h (B, H)
// out; tanh_c (B, H), when given, gets tanh(clip(c')) (backward needs it).
template <typename S>
void lstm_forward(View<S> gates, View<S> c, View<S> h, S clip, S* tanh_c = nullptr) {
  const auto H = c.cols();
  auto a = gates.array();
  a.leftCols(2 * H) = a.leftCols(2 * H).logistic();
  a.middleCols(2 * H, H) = a.middleCols(2 * H, H).tanh();
  a.rightCols(H) = a.rightCols(H).logistic();
  const auto i = a.leftCols(H), f = a.middleCols(H, H), g = a.middleCols(2 * H, H);
  const auto o = a.rightCols(H);
  if (clip > S(0)) {
    c.array() = f * c.array().max(-clip).min(clip) + i * g;
  } else {
    c.array() = f * c.array() + i * g;
  }
  if (tanh_c) {
    // The learner keeps tanh(clip(c')) for backward: computed once, and h from it.
    Eigen::Map<RowMat<S>> t(tanh_c, c.rows(), H);
    if (clip > S(0)) {
      t.array() = c.array().max(-clip).min(clip).tanh();
    } else {
      t.array() = c.array().tanh();
    }
    h.array() = o * t.array();
  } else if (clip > S(0)) {
    h.array() = o * c.array().max(-clip).min(clip).tanh();
  } else {
    h.array() = o * c.array().tanh();
  }
}

// rz (B, 2H): pre-activations of r and z in, activations out; n (B, H): W_n x + b_Wn in, the
// candidate n out; hn (B, H): R_n h + b_Rn; h (B, H): previous h in, new h out.
template <typename S>
void gru_forward(View<S> rz, View<S> n, CView<S> hn, View<S> h) {
  const auto H = h.cols();
  rz.array() = rz.array().logistic();
  n.array() = (n.array() + rz.leftCols(H).array() * hn.array()).tanh();
  const auto z = rz.rightCols(H).array();
  h.array() = (S(1) - z) * n.array() + z * h.array();
}

// pre (B, H) in; h (B, H) = act(pre) out.
template <typename S>
void rnn_forward(CView<S> pre, View<S> h, bool relu) {
  if (relu) {
    h.array() = pre.array().max(S(0));
  } else {
    h.array() = pre.array().tanh();
  }
}

// zh (B, 2H): pre-activations [z | h~] in (input projection with bias), z's activation out in
// the left block (h~ stays); h (B, H): previous h in, h' = h + z (h~ - h) out (= (1 - z) h + z h~).
template <typename S>
void mingru_forward(View<S> zh, View<S> h) {
  const auto H = h.cols();
  zh.leftCols(H).array() = zh.leftCols(H).array().logistic();
  h.array() += zh.leftCols(H).array() * (zh.rightCols(H).array() - h.array());
}

// The gated highway of a mingru_highway layer (core_spec.h). p (B, H): the third block's
// pre-activations in, s = sigmoid(p) out (backward needs it); h (B, H) this layer's new h;
// out (B, H): out_{k-1} in when `below`, else ignored (layer 0: out_{-1} = 0); out_k out.
template <typename S>
void highway_forward(View<S> p, CView<S> h, View<S> out, bool below) {
  p.array() = p.array().logistic();
  if (below) {
    out.array() += p.array() * (h.array() - out.array());  // s h + (1 - s) out
  } else {
    out.array() = p.array() * h.array();
  }
}

// Layer norm of one row v (H values) in place (core_spec.h, LSTM_LN): v = gain * (v - mean) * r +
// shift with r = 1 / sqrt(var + eps), var the biased variance of the centred values. xhat (H),
// when given, gets the normalized values before gain and shift, and *rstd gets r (backward needs
// both).
template <typename S>
void layer_norm_row(S* v, int H, const S* gain, const S* shift, S eps, S* xhat, S* rstd) {
  const auto n = static_cast<size_t>(H);
  const S mean = policy::lane_sum<S>(n, [v](size_t j) { return v[j]; }) / static_cast<S>(H);
  for (int j = 0; j < H; ++j) v[j] -= mean;
  const S var = policy::lane_sum<S>(n, [v](size_t j) { return v[j] * v[j]; }) / static_cast<S>(H);
  const S r = S(1) / std::sqrt(var + eps);
  if (xhat) {
    for (int j = 0; j < H; ++j) {
      xhat[j] = v[j] * r;
      v[j] = xhat[j] * gain[j] + shift[j];
    }
  } else {
    for (int j = 0; j < H; ++j) v[j] = v[j] * r * gain[j] + shift[j];
  }
  if (rstd) *rstd = r;
}

// LayerNorm's input gradient for one row of H: dx = r * (g - mean(g) - xhat * mean(g xhat)) with
// g = dy * gain and r = 1 / sqrt(var + eps) of the forward pass.
template <typename S>
void layer_norm_backward(int H, const S* dy, const S* xhat, const S* gain, S r, S* dx) {
  const auto n = static_cast<size_t>(H);
  const S sum_g = policy::lane_sum<S>(n, [=](size_t j) { return dy[j] * gain[j]; });
  const S sum_gx = policy::lane_sum<S>(n, [=](size_t j) { return dy[j] * gain[j] * xhat[j]; });
  const S mean_g = sum_g / static_cast<S>(H), mean_gx = sum_gx / static_cast<S>(H);
  for (int j = 0; j < H; ++j) dx[j] = r * (dy[j] * gain[j] - mean_g - xhat[j] * mean_gx);
}

// The layer-norm LSTM (core_spec.h, LSTM_LN). gates (B, 4H): pre-activations [i f g o] (no bias)
// in, activations out; c (B, H): the previous (normalized) cell state in, the new one out; h
// (B, H) out. gain, shift: (5H), LayerNorm rows i, f, g, o, c. The learner passes xhat (B, 5H):
// the normalized values before gain and shift (gate blocks, then c), rstd (B, 5) and tanh_c
// (B, H), which backward reads; the actor passes none.
template <typename S>
void lstm_ln_forward(View<S> gates, View<S> c, View<S> h, const S* gain, const S* shift, S eps,
                     S* xhat = nullptr, S* rstd = nullptr, S* tanh_c = nullptr) {
  const auto B = c.rows();
  const int H = static_cast<int>(c.cols());
  for (Eigen::Index b = 0; b < B; ++b)
    for (int q = 0; q < 4; ++q)
      layer_norm_row<S>(&gates(b, q * H), H, gain + q * H, shift + q * H, eps,
                        xhat ? xhat + b * 5 * H + q * H : nullptr,
                        rstd ? rstd + b * 5 + q : nullptr);
  auto a = gates.array();
  a.leftCols(2 * H) = a.leftCols(2 * H).logistic();
  a.middleCols(2 * H, H) = a.middleCols(2 * H, H).tanh();
  a.rightCols(H) = a.rightCols(H).logistic();
  c.array() = a.middleCols(H, H) * c.array() + a.leftCols(H) * a.middleCols(2 * H, H);
  for (Eigen::Index b = 0; b < B; ++b)
    layer_norm_row<S>(&c(b, 0), H, gain + 4 * H, shift + 4 * H, eps,
                      xhat ? xhat + b * 5 * H + 4 * H : nullptr, rstd ? rstd + b * 5 + 4 : nullptr);
  if (tanh_c) {
    Eigen::Map<RowMat<S>> t(tanh_c, B, H);
    t.array() = c.array().tanh();
    h.array() = a.rightCols(H) * t.array();
  } else {
    h.array() = a.rightCols(H) * c.array().tanh();
  }
}

// One row's activations of the layer-norm LSTM from its normalized values xhat (5H: gate blocks
// i f g o, then c, as lstm_ln_forward keeps them): out (5H) gets sigmoid(i) sigmoid(f) tanh(g)
// sigmoid(o) and tanh(c'), with c' = gain * xhat + shift as the forward pass formed it (the same
// operations, so the same values).
template <typename S>
void lstm_ln_activations(int H, const S* xhat, const S* gain, const S* shift, S* out) {
  using Arr = Eigen::Array<S, Eigen::Dynamic, 1>;
  const Eigen::Index n = 5 * static_cast<Eigen::Index>(H), h = H;
  Eigen::Map<Arr> y(out, n);
  y = Eigen::Map<const Arr>(xhat, n) * Eigen::Map<const Arr>(gain, n) +
      Eigen::Map<const Arr>(shift, n);
  y.head(2 * h) = y.head(2 * h).logistic();
  y.segment(2 * h, h) = y.segment(2 * h, h).tanh();
  y.segment(3 * h, h) = y.segment(3 * h, h).logistic();
  y.tail(h) = y.tail(h).tanh();
}

}  // namespace recur::policy::gate_math
