// The two-level parallel scan of minGRU (kernels/sequence_cells.h), written once for both
// devices: the CUDA kernels run these functions per thread, and the CPU test
// (tests/kernels/mingru_scan_math_test.cc) runs them for every (column, chunk) of a block against
// the CPU sequence engine, so the chunking and carry composition are checked without a GPU.
//
// One column is one (b, j) of a (T, B, H) layer; its T steps are cut into kScanChunks chunks.
// Forward, h_t = a_t h_{t-1} + b_t with a_t = start_t ? 0 : 1 - z_t and b_t = z_t h~_t:
//   1. each chunk folds its steps into one affine map h_end = A h_begin + Bc
//      (mingru_fold_forward, which also applies the activations in place);
//   2. the chunks' carries are composed in order from h0 (mingru_compose_forward);
//   3. each chunk re-runs its steps from its carry with the CPU engine's update
//      h = h_prev + z (h~ - h_prev) (mingru_chunk_forward).
// Backward is the same scan from t = T - 1 down on the carry n (the gradient reaching h_t from
// step t + 1): g_t = dh_out_t + n_t, n_{t-1} = a_t g_t.
// Layouts are the sequence engine's: zh (T*B, G*H) [z | h~] (G = 2) or [z | h~ | p] (G = 3,
// mingru_highway: the scan reads the first two blocks), h/h_prev/dh_out (T*B, H), rows t * B + b.
// The highway's elementwise halves (highway_forward_at, highway_backward_at) are here too, so
// the same CPU test checks them. Plain C++ without nvcc.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "kernels/learner_math.h"  // RECUR_HD

namespace recur::kernels {

inline constexpr int kScanChunks = 8;

// The time range [t0, t1) of chunk k of T (empty for the chunks past T when T < kScanChunks).
RECUR_HD inline void mingru_chunk_range(int T, int k, int& t0, int& t1) {
  const int len = (T + kScanChunks - 1) / kScanChunks;
  t0 = k * len < T ? k * len : T;
  t1 = t0 + len < T ? t0 + len : T;
}

RECUR_HD inline float mingru_sigmoid(float x) {
  return 1.0f / (1.0f + expf(-x));
}

struct ScanColumn {
  int T, B, H;
  int b, j;  // the column
  int G;     // gate blocks per row of zh: 2 (mingru) or 3 (mingru_highway)
};

// Pass 1 of the forward for one column's chunk [t0, t1): z = sigmoid(z + b_z) and h~ + b_h in
// place, and the chunk's map (A, Bc).
RECUR_HD inline void mingru_fold_forward(const ScanColumn& c, int t0, int t1, float* zh,
                                         const float* bias, const uint8_t* starts, float& A,
                                         float& Bc) {
  const size_t zw = static_cast<size_t>(c.G) * c.H;
  A = 1.0f;
  Bc = 0.0f;
  for (int t = t0; t < t1; ++t) {
    const size_t row = static_cast<size_t>(t) * c.B + c.b;
    float* r = zh + row * zw;
    const float z = mingru_sigmoid(r[c.j] + bias[c.j]);
    const float ht = r[c.H + c.j] + bias[c.H + c.j];
    r[c.j] = z;
    r[c.H + c.j] = ht;
    const float a = starts[row] ? 0.0f : 1.0f - z;
    A *= a;
    Bc = a * Bc + z * ht;
  }
}

// Pass 2: the chunks' maps (A[k], Bc[k], k < kScanChunks, each `stride` apart) become their
// carries in (h at each chunk's start) in place, from h0.
RECUR_HD inline void mingru_compose_forward(float* A, float* Bc, size_t stride, float h0) {
  float h = h0;
  for (int k = 0; k < kScanChunks; ++k) {
    const float next = A[k * stride] * h + Bc[k * stride];
    A[k * stride] = h;
    h = next;
  }
}

// Pass 3: the chunk's steps from its carry h, writing h_prev and h.
RECUR_HD inline void mingru_chunk_forward(const ScanColumn& c, int t0, int t1, const float* zh,
                                          const uint8_t* starts, float h, float* h_prev,
                                          float* h_out) {
  const size_t zw = static_cast<size_t>(c.G) * c.H;
  for (int t = t0; t < t1; ++t) {
    const size_t row = static_cast<size_t>(t) * c.B + c.b;
    const float* r = zh + row * zw;
    const float hp = starts[row] ? 0.0f : h;
    h_prev[row * c.H + c.j] = hp;
    h = hp + r[c.j] * (r[c.H + c.j] - hp);
    h_out[row * c.H + c.j] = h;
  }
}

// Backward pass 1, from t1 - 1 down: the carry out of the chunk's first step n_out = A n_in + Bc,
// n_in being the carry into its last step.
RECUR_HD inline void mingru_fold_backward(const ScanColumn& c, int t0, int t1, const float* zh,
                                          const uint8_t* starts, const float* dh_out, float& A,
                                          float& Bc) {
  const size_t zw = static_cast<size_t>(c.G) * c.H;
  A = 1.0f;
  Bc = 0.0f;
  for (int t = t1 - 1; t >= t0; --t) {
    const size_t row = static_cast<size_t>(t) * c.B + c.b;
    const float a = starts[row] ? 0.0f : 1.0f - zh[row * zw + c.j];
    A *= a;
    Bc = a * (Bc + dh_out[row * c.H + c.j]);
  }
}

// Backward pass 2: the chunks' maps become their carries in, from the last chunk (nothing flows
// in from beyond the batch); returns the carry out of chunk 0, the initial state's gradient.
RECUR_HD inline float mingru_compose_backward(float* A, float* Bc, size_t stride) {
  float n = 0.0f;
  for (int k = kScanChunks - 1; k >= 0; --k) {
    const float next = A[k * stride] * n + Bc[k * stride];
    A[k * stride] = n;
    n = next;
  }
  return n;
}

// Backward pass 3: the chunk's steps from its carry n, writing dzh = [g (h~ - h_prev) z (1 - z) |
// g z], the sequence engine's gate gradients.
RECUR_HD inline void mingru_chunk_backward(const ScanColumn& c, int t0, int t1, const float* zh,
                                           const uint8_t* starts, const float* h_prev,
                                           const float* dh_out, float n, float* dzh) {
  const size_t zw = static_cast<size_t>(c.G) * c.H;
  for (int t = t1 - 1; t >= t0; --t) {
    const size_t row = static_cast<size_t>(t) * c.B + c.b;
    const float* r = zh + row * zw;
    const float z = r[c.j], ht = r[c.H + c.j];
    const float dh = dh_out[row * c.H + c.j] + n;
    float* d = dzh + row * zw;
    d[c.j] = dh * (ht - h_prev[row * c.H + c.j]) * z * (1.0f - z);
    d[c.H + c.j] = dh * z;
    n = starts[row] ? 0.0f : dh * (1.0f - z);
  }
}

// The gated highway of a mingru_highway layer (policy/core_spec.h) at one element, after the
// scan: p is the third block's pre-activation (no bias) in and s = sigmoid(p + b_p) out (backward
// reads it); below is out_{k-1}, or null at layer 0 (out_{-1} = 0). Returns out_k, with
// gate_math::highway_forward's op order: below + s (h - below), or s h.
RECUR_HD inline float highway_forward_at(float& p, float b_p, float h, const float* below) {
  const float s = mingru_sigmoid(p + b_p);
  p = s;
  return below ? *below + s * (h - *below) : s * h;
}

// Its transpose, before the scan's backward: dout (the output's gradient) in, dh = dout s out;
// dp = dout (h - below) s (1 - s) (p's pre-activation gradient); *dskip = dout (1 - s) where
// there is a layer below (dskip null at layer 0).
RECUR_HD inline void highway_backward_at(float s, float h, const float* below, float& dout,
                                         float& dp, float* dskip) {
  const float d = dout;
  dp = d * (h - (below ? *below : 0.0f)) * s * (1.0f - s);
  if (dskip) *dskip = d * (1.0f - s);
  dout = d * s;
}

}  // namespace recur::kernels
