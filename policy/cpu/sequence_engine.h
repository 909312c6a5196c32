// The CPU fused layer: forward and backward through time of the core over (T, B) at once,
// templated on the scalar so that a double instance can be checked against finite differences
// and the float instance against it. Weights live in one flat buffer in canonical order (per
// layer: weight_ih (G*H, in_k), weight_hh (G*H, H), bias_ih, bias_hh), so the learner's layout
// IS the canonical layout and conversion is a copy.
//
// Per layer, forward is: one GEMM for the input projection of all T*B rows
//   A_x (T*B, G*H) = X (T*B, in) W_ih^T
// then per step the biases and one GEMM that adds the recurrent projection into step t's rows
//   A_x[t] += b_ih + b_hh + h_prev (B, H) W_hh^T
// and one fused elementwise pass for the gates (equations in core_spec.h). Backward mirrors it:
// per step one GEMM for dh_prev, and after the time loop one GEMM each for dW_hh, dW_ih and the
// input gradient of all T*B rows. The pre-activation gradients of both projections are then one
// buffer. Accumulating into A_x rather than into a buffer of its own saves, per step, a write and
// two reads of B x G*H floats, and backward one (T*B, G*H) buffer: at large B x T the gate buffers
// outgrow the caches, and each pass over them goes to memory (docs/PERFORMANCE.md, "The CPU fused
// layer, memory passes removed"). The GRU keeps its recurrent projection apart (A_h, B x G*H,
// with b_hh), since r scales R_n h_prev + b_Rn.
//
// minGRU has no recurrent projection (no W_hh, no b_hh): per step only the elementwise scan
// h = h_prev + z (h~ - h_prev) forward and its transpose backward, vectorized over B x H. The
// scan is sequential in T, and on a CPU that wins: each step already has B x H independent
// lanes (8192 at B 64, H 128) for SIMD and for splitting across cores, so the T-long dependency
// chain never leaves a core idle, while a parallel scan does more of the elementwise work that is
// the whole cost here (with a narrow input the T*B-row GEMM is small and the time goes to the
// elementwise passes: `recur bench rnn`). Measured (`recur bench scan`, docs/PERFORMANCE.md): a
// chunked parallel-in-T scan costs 1.2-1.6x this loop on one thread and, with 2 threads, beats the
// loop with its lanes split over both only for a single sequence (B = 1: too few lanes to split).
//
// A minGRU stack is residual (core_spec.h): layer k >= 1 outputs h_k + its input, so backward
// adds the output gradient to the input gradient of that layer. A mingru_highway layer outputs
// s h_k + (1 - s) out_{k-1} with s = sigmoid(p) of its third gate block: forward forms it for all
// T*B rows after the scan, and backward splits the output gradient before the scan (into p's
// pre-activation, h and the skip to the input), since s reads no state.
//
// The layer-norm LSTM (lstm_ln) has no biases: its input and recurrent projections are added as
// they are, and the gate pass (gate_math::lstm_ln_forward) normalizes each row's gate blocks and
// new cell state, keeping the normalized values and 1/sigma per group for backward. Backward
// reads each row's activations, or at large (T, B) recomputes them from those values (cheaper
// than reading them back from memory; kRecomputeActivationsBytes), applies LayerNorm's transpose
// per row inside the gate pass and sums the gains' and shifts' gradients step by step, over the
// rows the pass has just written.
//
// Resets: the effective previous state of step t is zero for slots with episode_start[t] = 1;
// the engine keeps those effective states, so backward sends no gradient across a reset (and
// none into the initial state of a slot reset at t = 0).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>
#include <vector>

#include "policy/aligned.h"
#include "policy/core_spec.h"
#include "policy/cpu/gate_math.h"
#include "policy/eigen.h"
#include "policy/gemm.h"

// Before a loop over one row's H units whose pointers name distinct buffers: tells the compiler
// that no store of the loop feeds a later iteration's load, which it cannot prove for raw
// pointers and would otherwise answer with scalar code (perf: the LSTM's backward gate pass ran
// one float at a time; vectorized, it made forward + backward up to 1.2x faster).
#if defined(__clang__)
#define RECUR_INDEPENDENT_ITERATIONS _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define RECUR_INDEPENDENT_ITERATIONS _Pragma("GCC ivdep")
#else
#define RECUR_INDEPENDENT_ITERATIONS
#endif

namespace recur::policy {

template <typename S>
class SequenceEngine {
 public:
  using Mat = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using MapM = Eigen::Map<Mat>;
  using CMapM = Eigen::Map<const Mat>;
  using RowV = Eigen::Matrix<S, 1, Eigen::Dynamic>;
  using ColMat = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;

  explicit SequenceEngine(const CoreSpec& spec) : spec_(spec) {
    spec.validate();
    size_t off = 0;
    const size_t gh = static_cast<size_t>(spec.gates() * spec.hidden);
    const size_t rh = static_cast<size_t>(spec.recurrent_rows());  // 0 for minGRU
    const size_t nh = static_cast<size_t>(spec.norm_size());       // 0 but for lstm_ln
    for (int k = 0; k < spec.layers; ++k) {
      Offsets o;
      o.w_ih = off;
      off += gh * static_cast<size_t>(spec.layer_input(k));
      o.w_hh = off;
      off += rh * static_cast<size_t>(spec.hidden);
      o.b_ih = off;
      off += static_cast<size_t>(spec.bias_rows());
      o.b_hh = off;
      off += static_cast<size_t>(spec.recurrent_bias_rows());
      o.n_w = off;
      off += nh;
      o.n_b = off;
      off += nh;
      offsets_.push_back(o);
    }
    params_.assign(off, S(0));
    grads_.assign(off, S(0));
    layers_.resize(static_cast<size_t>(spec.layers));
  }

  // lstm_ln: backward recomputes each row's activations from the kept normalized values, instead
  // of reading the stored ones, when those values take at least this many bytes per layer. There
  // the stored activations come back from memory, not cache, and reading them costs more than
  // the activations do; below it the recomputation is the cost (measured on 2 EPYC cores, 2 MB of
  // L2 each and 32 MB of L3: forward + backward at T 32, H 64, B 512 (21 MB) 1.16x faster with
  // it, B 256 (10 MB) 1.10x, B 128 (5 MB) level, B 2-64 1.05x slower; docs/PERFORMANCE.md,
  // "The layer-norm LSTM at large batches"). The tests set 0 to take this path at small sizes.
  static constexpr size_t kRecomputeActivationsBytes = size_t{8} << 20;
  void set_recompute_activations_bytes(size_t bytes) { recompute_bytes_ = bytes; }

  const CoreSpec& spec() const { return spec_; }
  AlignedVector<S>& params() { return params_; }
  const AlignedVector<S>& params() const { return params_; }
  AlignedVector<S>& grads() { return grads_; }
  const AlignedVector<S>& grads() const { return grads_; }
  struct Offsets {
    size_t w_ih, w_hh, b_ih, b_hh, n_w, n_b;
  };
  const Offsets& offsets(int k) const { return offsets_[static_cast<size_t>(k)]; }

  // x (T, B, in), episode_start (T, B), initial_state (B, S), y (T, B, H), final_state (B, S)
  // or empty.
  void forward(int T, int B, const S* x, const uint8_t* episode_start, const S* initial_state, S* y,
               S* final_state) {
    t_ = T;
    b_ = B;
    starts_.assign(episode_start, episode_start + static_cast<size_t>(T) * B);
    const int H = spec_.hidden, L = spec_.layers, G = spec_.gates();
    const int ss = spec_.state_size(), R = spec_.recurrent_rows();
    const bool lstm = has_cell_state(spec_.cell), recurrent = R > 0;
    const bool biased = has_gate_biases(spec_.cell), normed = has_layer_norm(spec_.cell);
    recompute_ =
        normed && static_cast<size_t>(T) * B * kNormGroups * H * sizeof(S) >= recompute_bytes_;
    for (int k = 0; k < L; ++k) {
      Layer& ly = layers_[static_cast<size_t>(k)];
      const int in = spec_.layer_input(k);
      const size_t tb = static_cast<size_t>(T) * B;
      ly.input.resize(tb * in);
      if (k == 0) {
        std::copy(x, x + tb * in, ly.input.begin());
      } else {
        const AlignedVector<S>& below = output(k - 1);
        std::copy(below.begin(), below.end(), ly.input.begin());
      }
      ly.gates.resize(tb * G * H);
      ly.h.resize(tb * H);
      ly.h_prev.resize(tb * H);
      if (lstm) {
        ly.c.resize(tb * H);
        ly.c_prev.resize(tb * H);
        if (!recompute_) ly.tanh_c.resize(tb * H);
      }
      if (normed) {
        ly.xhat.resize(tb * kNormGroups * H);
        ly.rstd.resize(tb * kNormGroups);
      }
      if (spec_.cell == CellType::kGru) {
        ly.hn.resize(tb * H);
        a_h_.resize(static_cast<size_t>(B) * R);
      }

      const Offsets& o = offsets_[static_cast<size_t>(k)];
      Eigen::Map<const RowV> b_ih(params_.data() + o.b_ih, spec_.bias_rows());
      Eigen::Map<const RowV> b_hh(params_.data() + o.b_hh, spec_.recurrent_bias_rows());
      // The weights transposed, (in, G*H) and (H, R), once per call: every forward product then
      // reads its right-hand side as stored (see product()).
      transpose_into(params_.data() + o.w_ih, G * H, in, ly.w_ih_t);
      transpose_into(params_.data() + o.w_hh, R, H, ly.w_hh_t);

      // Input projection of all T*B rows: one GEMM. The biases are added step by step below, to
      // rows the step's GEMM is about to read (a pass over all T*B rows here would stream the
      // whole buffer through memory once more); where the gates add the recurrent projection as
      // it is, its bias joins b_ih and the step's GEMM accumulates into the gates themselves.
      product(static_cast<int>(tb), in, G * H, ly.input.data(), ly.w_ih_t.data(), ly.gates.data(),
              false);
      if (biased) {
        bias_ = b_ih;
        if (direct_recurrent()) bias_ += b_hh;
      }

      for (int t = 0; t < T; ++t) {
        const size_t row0 = static_cast<size_t>(t) * B;
        S* hp = ly.h_prev.data() + row0 * H;
        S* cp = lstm ? ly.c_prev.data() + row0 * H : nullptr;
        // Effective previous state: the stored one, or zeros at an episode start.
        for (int b = 0; b < B; ++b) {
          const bool reset = starts_[row0 + b] != 0;
          const S* src_h = t == 0 ? initial_state + static_cast<size_t>(b) * ss + k * H
                                  : ly.h.data() + (row0 - B + b) * H;
          const S* src_c = nullptr;
          if (lstm)
            src_c = t == 0 ? initial_state + static_cast<size_t>(b) * ss + (L + k) * H
                           : ly.c.data() + (row0 - B + b) * H;
          if (reset) {
            std::fill_n(hp + b * H, H, S(0));
            if (lstm) std::fill_n(cp + b * H, H, S(0));
          } else {
            std::copy_n(src_h, H, hp + b * H);
            if (lstm) std::copy_n(src_c, H, cp + b * H);
          }
        }
        MapM a_t(ly.gates.data() + row0 * G * H, B, G * H);
        if (biased) a_t.rowwise() += bias_;
        if (direct_recurrent()) {
          product(B, H, R, hp, ly.w_hh_t.data(), a_t.data(), true);
        } else if (recurrent) {  // GRU: R_n h_prev + b_Rn is needed apart (it is scaled by r)
          product(B, H, R, hp, ly.w_hh_t.data(), a_h_.data(), false);
          if (biased) MapM(a_h_.data(), B, R).rowwise() += b_hh;
        }
        gate_forward(B, k, ly, row0);
      }
      const auto rows = static_cast<Eigen::Index>(tb);
      if (residual(k)) {  // out_k = h_k + out_{k-1}, all T*B rows at once
        ly.out.resize(tb * H);
        MapM(ly.out.data(), rows, H) =
            CMapM(ly.h.data(), rows, H) + CMapM(ly.input.data(), rows, H);
      }
      if (highway()) {  // out_k = s h_k + (1 - s) out_{k-1}, all T*B rows at once; s kept in p
        ly.out.resize(tb * H);
        if (k > 0) std::copy(ly.input.begin(), ly.input.end(), ly.out.begin());
        gate_math::highway_forward<S>(MapM(ly.gates.data(), rows, G * H).rightCols(H),
                                      CMapM(ly.h.data(), rows, H), MapM(ly.out.data(), rows, H),
                                      k > 0);
      }
    }
    const AlignedVector<S>& top = output(L - 1);
    std::copy(top.begin(), top.end(), y);
    if (final_state) {
      const size_t last = static_cast<size_t>(T - 1) * B;
      for (int b = 0; b < B; ++b)
        for (int k = 0; k < L; ++k) {
          const Layer& ly = layers_[static_cast<size_t>(k)];
          std::copy_n(ly.h.data() + (last + b) * H, H,
                      final_state + static_cast<size_t>(b) * ss + k * H);
          if (lstm)
            std::copy_n(ly.c.data() + (last + b) * H, H,
                        final_state + static_cast<size_t>(b) * ss + (L + k) * H);
        }
    }
  }

  // dy (T, B, H) -> dx (T, B, in) or null, d_initial_state (B, S) or null; parameter gradients
  // are added to grads().
  void backward(const S* dy, S* dx, S* d_initial_state) {
    const int T = t_, B = b_, H = spec_.hidden, L = spec_.layers, G = spec_.gates();
    const int ss = spec_.state_size(), R = spec_.recurrent_rows();
    const bool lstm = has_cell_state(spec_.cell), recurrent = R > 0;
    const bool biased = has_gate_biases(spec_.cell), normed = has_layer_norm(spec_.cell);
    const size_t tb = static_cast<size_t>(T) * B;
    dh_out_.assign(dy, dy + tb * H);  // gradient arriving at this layer's outputs
    if (d_initial_state) std::fill_n(d_initial_state, static_cast<size_t>(B) * ss, S(0));
    for (int k = L - 1; k >= 0; --k) {
      Layer& ly = layers_[static_cast<size_t>(k)];
      const int in = spec_.layer_input(k);
      const Offsets& o = offsets_[static_cast<size_t>(k)];
      const S* w_ih = params_.data() + o.w_ih;
      const S* w_hh = params_.data() + o.w_hh;
      Eigen::Map<RowV> gb_ih(grads_.data() + o.b_ih, spec_.bias_rows());
      Eigen::Map<RowV> gb_hh(grads_.data() + o.b_hh, spec_.recurrent_bias_rows());

      da_x_.resize(tb * G * H);
      // The recurrent side's pre-activation gradients: a GRU's own, else the input side's.
      const bool separate = recurrent && !direct_recurrent();
      if (separate) da_h_.resize(tb * R);
      S* const da_h = separate ? da_h_.data() : da_x_.data();
      dh_next_.assign(static_cast<size_t>(B) * H, S(0));
      dc_next_.assign(lstm ? static_cast<size_t>(B) * H : 0, S(0));
      dh_prev_.resize(static_cast<size_t>(B) * H);
      const auto nw = static_cast<Eigen::Index>(kNormGroups * H);
      if (normed) {
        dnorm_.resize(static_cast<size_t>(B) * nw);
        norm_gain_grad_.setZero(nw);
        norm_shift_grad_.setZero(nw);
      }
      if (highway()) highway_backward(k, ly);  // p's gradient, the skip's; dh_out_ becomes dh
      if (biased) {
        bias_grad_.setZero(G * H);
        if (separate) recurrent_bias_grad_.setZero(R);
      }
      for (int t = T - 1; t >= 0; --t) {
        const size_t row0 = static_cast<size_t>(t) * B;
        gate_backward(B, k, ly, row0, dh_out_.data() + row0 * H, da_x_.data() + row0 * G * H,
                      separate ? da_h + row0 * R : nullptr);
        // Recurrent side: dh_prev = dA_h W_hh (+ the direct GRU path already in dh_prev_).
        // The weight gradient waits for all steps: one GEMM after the loop, not T thin ones.
        if (recurrent) product(B, R, H, da_h + row0 * R, w_hh, dh_prev_.data(), true);
        // LayerNorm's gains and shifts: dgamma += sum dy * xhat, dbeta += sum dy over the step's
        // rows.
        if (normed) {
          CMapM dn(dnorm_.data(), B, nw);
          norm_gain_grad_ += (dn.array() * CMapM(ly.xhat.data() + row0 * nw, B, nw).array())
                                 .matrix()
                                 .colwise()
                                 .sum();
          norm_shift_grad_ += dn.colwise().sum();
        }
        // The biases' gradient, summed while the step's rows are still in cache.
        if (biased) {
          bias_grad_ += CMapM(da_x_.data() + row0 * G * H, B, G * H).colwise().sum();
          if (separate) recurrent_bias_grad_ += CMapM(da_h + row0 * R, B, R).colwise().sum();
        }
        // Carry to step t-1, except across a reset (the previous state was replaced by zeros);
        // at t = 0 the carry is the initial state's gradient.
        if (t == 0 && !d_initial_state) continue;
        for (int b = 0; b < B; ++b) {
          const bool reset = starts_[row0 + b] != 0;
          S* dst_h = t > 0 ? dh_next_.data() + b * H
                           : d_initial_state + static_cast<size_t>(b) * ss + k * H;
          S* dst_c = !lstm   ? nullptr
                     : t > 0 ? dc_next_.data() + b * H
                             : d_initial_state + static_cast<size_t>(b) * ss + (L + k) * H;
          if (reset) {
            std::fill_n(dst_h, H, S(0));
            if (lstm) std::fill_n(dst_c, H, S(0));
          } else {
            std::copy_n(dh_prev_.data() + b * H, H, dst_h);
            if (lstm) std::copy_n(dc_prev_.data() + b * H, H, dst_c);
          }
        }
      }
      // Recurrent weights, all T*B rows at once: dW_hh += dA_h^T h_prev.
      if (recurrent)
        weight_gradient(static_cast<int>(tb), R, H, da_h, ly.h_prev.data(), ly.dw_hh,
                        grads_.data() + o.w_hh);
      if (normed) {
        Eigen::Map<RowV>(grads_.data() + o.n_w, nw) += norm_gain_grad_;
        Eigen::Map<RowV>(grads_.data() + o.n_b, nw) += norm_shift_grad_;
      }
      // Input side, all T*B rows at once.
      weight_gradient(static_cast<int>(tb), G * H, in, da_x_.data(), ly.input.data(), ly.dw_ih,
                      grads_.data() + o.w_ih);
      if (biased) {
        gb_ih += bias_grad_;
        if (recurrent) gb_hh += separate ? recurrent_bias_grad_ : bias_grad_;
      }
      if (k > 0 || dx) {
        din_.resize(tb * in);
        product(static_cast<int>(tb), G * H, in, da_x_.data(), w_ih, din_.data(), false);
        MapM din(din_.data(), static_cast<Eigen::Index>(tb), in);
        // The skip path of a residual stack: d out_{k-1} gets d out_k unchanged; of a highway,
        // d out_k (1 - s).
        if (residual(k)) din += CMapM(dh_out_.data(), static_cast<Eigen::Index>(tb), H);
        if (highway() && k > 0) din += CMapM(dskip_.data(), static_cast<Eigen::Index>(tb), H);
        if (k > 0) {
          dh_out_.swap(din_);
        } else {
          std::copy(din_.begin(), din_.end(), dx);
        }
      }
    }
  }

 private:
  struct Layer {
    AlignedVector<S> input;      // (T*B, in)
    AlignedVector<S> gates;      // (T*B, G*H): pre-activations, then activations in place
    AlignedVector<S> h, h_prev;  // (T*B, H) output and effective previous h
    AlignedVector<S> c, c_prev;  // LSTM: (T*B, H) raw c and the effective previous raw c
    AlignedVector<S> tanh_c;     // (T*B, H) tanh(clip(c)); lstm_ln's tanh(c') unless recompute_
    AlignedVector<S> hn;         // GRU: (T*B, H) R_n h_prev + b_Rn
    AlignedVector<S> out;        // minGRU stack: (T*B, H) h + input (k >= 1), or the highway's
    AlignedVector<S> xhat;       // lstm_ln: (T*B, 5H) normalized values before gain (i f g o c)
    AlignedVector<S> rstd;       // lstm_ln: (T*B, 5) 1 / sqrt(var + eps) of each group
    AlignedVector<S> w_ih_t;     // (in, G*H): weight_ih transposed by forward
    AlignedVector<S> w_hh_t;     // (H, R): weight_hh transposed by forward
    ColMat dw_ih, dw_hh;         // backward, double: this call's weight gradients
  };

  bool residual(int k) const { return k > 0 && has_residual_stack(spec_.cell); }
  // The gates add the recurrent projection as it is (every recurrent cell but the GRU, whose
  // R_n h_prev + b_Rn is scaled by r): forward accumulates it into the gates, and backward's
  // recurrent gradients are the input side's, so one buffer serves both.
  bool direct_recurrent() const {
    return spec_.recurrent_rows() > 0 && spec_.cell != CellType::kGru;
  }
  bool highway() const { return has_highway_stack(spec_.cell); }
  // Layer k's output (the next layer's input): h, or h + input in a residual stack, or the
  // highway's s h + (1 - s) input.
  const AlignedVector<S>& output(int k) const {
    const Layer& ly = layers_[static_cast<size_t>(k)];
    return has_layer_output(spec_.cell, k) ? ly.out : ly.h;
  }

  // out (rows, n) = or += x (rows, k) m (k, n), all row-major and contiguous: every product of
  // the engine has its right-hand side as stored (forward's weights transposed once per call).
  // The float engine goes through policy::gemm, LIBXSMM's generated kernels where the build has
  // it: they multiply without packing, where Eigen's GEMM packed all of m on every step's call
  // (at B 4, H 128: 3x the step's product; docs/PERFORMANCE.md, "Small products through
  // LIBXSMM"). The double engine, the float one's reference in the tests, stays on Eigen, with
  // one matrix-vector product per row below 3 rows (Eigen's GEMM would pack m for two rows).
  static void product(int rows, int k, int n, const S* x, const S* m, S* out, bool accumulate) {
    if constexpr (std::is_same_v<S, float>) {
      float_gemm(rows, n, k, x, Transpose::kNo, m, out, accumulate);
    } else {
      MapM o(out, rows, n);
      const CMapM xm(x, rows, k), mm(m, k, n);
      if (!accumulate) o.setZero();
      if (rows < 3) {
        for (Eigen::Index b = 0; b < rows; ++b) o.row(b).noalias() += xm.row(b) * mm;
      } else {
        o.noalias() += xm * mm;
      }
    }
  }

  // policy::gemm on contiguous buffers: c (m, n) [+]= op(a) (m, k) b (k, n).
  static void float_gemm(int m, int n, int k, const float* a, Transpose trans_a, const float* b,
                         float* c, bool accumulate) {
    const auto mm = static_cast<size_t>(m), nn = static_cast<size_t>(n),
               kk = static_cast<size_t>(k);
    gemm(m, n, k, {a, mm * kk}, trans_a, {b, kk * nn}, Transpose::kNo, {c, mm * nn}, accumulate);
  }

  // dst (cols, rows) = src (rows, cols)^T.
  static void transpose_into(const S* src, int rows, int cols, AlignedVector<S>& dst) {
    dst.resize(static_cast<size_t>(rows) * cols);
    MapM(dst.data(), cols, rows) = CMapM(src, rows, cols).transpose();
  }

  // dW (n, k) += dA^T X over all T*B rows, dA (rows, n) and X (rows, k). Float: policy::gemm with
  // A transposed (LIBXSMM takes that operand transposed as stored). Double: a column-major product,
  // where dA (the large operand) is the GEMM's left-hand side, whose packing from this layout is a
  // straight copy; into the row-major dW it would be the right-hand side, packed 4 values at a time
  // across rows. The sum is formed in a column-major buffer kept per layer and then added.
  static void weight_gradient(int rows, int n, int k, const S* da, const S* x, ColMat& sum, S* dw) {
    if constexpr (std::is_same_v<S, float>) {
      float_gemm(n, k, rows, da, Transpose::kYes, x, dw, true);
    } else {
      sum.noalias() = CMapM(da, rows, n).transpose() * CMapM(x, rows, k);
      MapM(dw, n, k) += sum;
    }
  }

  // The highway's transpose for all T*B rows of layer k, before its scan's backward: with
  // out = s h + (1 - s) below (below = 0 at k = 0) and dout in dh_out_,
  //   d p = dout (h - below) s (1 - s)  into da_x_'s third block,
  //   d below = dout (1 - s)            into dskip_ (k >= 1),
  //   d h = dout s                      into dh_out_ (what the scan's backward reads).
  void highway_backward(int k, const Layer& ly) {
    const int H = spec_.hidden, G = spec_.gates();
    const size_t tb = static_cast<size_t>(t_) * b_;
    const bool below = k > 0;
    if (below) dskip_.resize(tb * H);
    for (size_t r = 0; r < tb; ++r) {
      const S* s = ly.gates.data() + r * G * H + 2 * H;
      const S* h = ly.h.data() + r * H;
      const S* in = below ? ly.input.data() + r * H : nullptr;
      S* dp = da_x_.data() + r * G * H + 2 * H;
      S* dout = dh_out_.data() + r * H;
      S* dskip = below ? dskip_.data() + r * H : nullptr;
      RECUR_INDEPENDENT_ITERATIONS
      for (int j = 0; j < H; ++j) {
        const S sj = s[j], d = dout[j];
        dp[j] = d * (h[j] - (below ? in[j] : S(0))) * sj * (S(1) - sj);
        if (below) dskip[j] = d * (S(1) - sj);
        dout[j] = d * sj;
      }
    }
  }

  // One step for B rows at rows [row0, row0 + B) of the layer's buffers: gates holds the
  // pre-activations (both projections and biases; a GRU's: the input side, with a_h_ holding its
  // recurrent side) and becomes the activations; h_prev/c_prev hold the effective previous state.
  void gate_forward(int B, int k, Layer& ly, size_t row0) {
    namespace gm = gate_math;
    const int H = spec_.hidden, G = spec_.gates();
    MapM a(ly.gates.data() + row0 * G * H, B, G * H);
    MapM h(ly.h.data() + row0 * H, B, H);
    switch (spec_.cell) {
      case CellType::kLstmLn: {
        const Offsets& o = offsets_[static_cast<size_t>(k)];
        MapM c(ly.c.data() + row0 * H, B, H);
        c = CMapM(ly.c_prev.data() + row0 * H, B, H);
        gm::lstm_ln_forward<S>(a, c, h, params_.data() + o.n_w, params_.data() + o.n_b,
                               static_cast<S>(spec_.norm_epsilon),
                               ly.xhat.data() + row0 * kNormGroups * H,
                               ly.rstd.data() + row0 * kNormGroups,
                               recompute_ ? nullptr : ly.tanh_c.data() + row0 * H);
        break;
      }
      case CellType::kLstm: {
        MapM c(ly.c.data() + row0 * H, B, H);
        c = CMapM(ly.c_prev.data() + row0 * H, B, H);
        // tanh(clip(c)) is kept for backward (vectorized here, not one scalar tanh per unit there).
        gm::lstm_forward<S>(a, c, h, static_cast<S>(spec_.cell_clip), ly.tanh_c.data() + row0 * H);
        break;
      }
      case CellType::kGru: {
        MapM ah(a_h_.data(), B, spec_.recurrent_rows());
        MapM hn(ly.hn.data() + row0 * H, B, H);
        hn = ah.middleCols(2 * H, H);
        a.leftCols(2 * H) += ah.leftCols(2 * H);
        h = CMapM(ly.h_prev.data() + row0 * H, B, H);
        gm::gru_forward<S>(a.leftCols(2 * H), a.middleCols(2 * H, H), hn, h);
        break;
      }
      case CellType::kRnnTanh:
      case CellType::kRnnRelu:
        gm::rnn_forward<S>(a, h, spec_.cell == CellType::kRnnRelu);
        break;
      case CellType::kMinGru:  // no recurrent projection: a_h_ is empty and unused
        h = CMapM(ly.h_prev.data() + row0 * H, B, H);
        gm::mingru_forward<S>(a, h);
        break;
      case CellType::kMinGruHighway:  // the scan on [z | h~]; p waits for the whole sequence
        h = CMapM(ly.h_prev.data() + row0 * H, B, H);
        gm::mingru_forward<S>(a.leftCols(2 * H), h);
        break;
    }
  }

  // Backward of one step for B rows. Reads dh_out (B, H) + dh_next_/dc_next_, writes the
  // pre-activation gradients of the input side da_x (B, G*H) and, for a GRU, of the recurrent
  // side da_h (B, G*H; null for the other cells: theirs are da_x, or none), and the direct parts of
  // dh_prev_ (GRU's z path, minGRU's (1 - z), else 0) and dc_prev_ (LSTM).
  void gate_backward(int B, int k, const Layer& ly, size_t row0, const S* dh_out, S* da_x,
                     S* da_h) {
    const int H = spec_.hidden, G = spec_.gates();
    const S* gain = params_.data() + offsets_[static_cast<size_t>(k)].n_w;  // lstm_ln only
    const S* shift = params_.data() + offsets_[static_cast<size_t>(k)].n_b;
    const S clip = static_cast<S>(spec_.cell_clip);
    if (has_cell_state(spec_.cell)) dc_prev_.resize(static_cast<size_t>(B) * H);
    if (recompute_) act_.resize(static_cast<size_t>(kNormGroups) * H);
    // One loop per cell type (no branch inside the unit loop, so it vectorizes).
    for (int b = 0; b < B; ++b) {
      const S* a = ly.gates.data() + (row0 + b) * G * H;
      S* dx = da_x + static_cast<size_t>(b) * G * H;
      S* dr = da_h ? da_h + static_cast<size_t>(b) * G * H : nullptr;
      const size_t o = static_cast<size_t>(b) * H;
      const size_t so = (row0 + b) * H;
      const S* dho = dh_out + o;
      const S* dhn = dh_next_.data() + o;
      S* dhp = dh_prev_.data() + o;
      switch (spec_.cell) {
        case CellType::kLstm: {
          const S* dcn = dc_next_.data() + o;
          S* dcp = dc_prev_.data() + o;
          const S* tanh_c = ly.tanh_c.data() + so;
          const S* c = ly.c.data() + so;
          const S* c_prev = ly.c_prev.data() + so;
          // Without a clip the bound is infinite: every read passes its gradient.
          const S bound = clip > S(0) ? clip : std::numeric_limits<S>::infinity();
          RECUR_INDEPENDENT_ITERATIONS
          for (int j = 0; j < H; ++j) {
            const S i = a[j], f = a[H + j], g = a[2 * H + j], og = a[3 * H + j];
            const S dh = dho[j] + dhn[j];
            const S tc = tanh_c[j];
            // dc: the gradient of the raw c_t. The state is clipped where it is read (in h_t here,
            // in c_{t+1} inside dcn already); a clipped read passes no gradient (MINMAX).
            const bool c_inside = c[j] <= bound && c[j] >= -bound;
            const S dc = dcn[j] + (c_inside ? dh * og * (S(1) - tc * tc) : S(0));
            const bool prev_inside = c_prev[j] <= bound && c_prev[j] >= -bound;
            const S c_prev_read = prev_inside ? c_prev[j] : (c_prev[j] > S(0) ? bound : -bound);
            dcp[j] = prev_inside ? dc * f : S(0);
            dx[j] = dc * g * i * (S(1) - i);
            dx[H + j] = dc * c_prev_read * f * (S(1) - f);
            dx[2 * H + j] = dc * i * (S(1) - g * g);
            dx[3 * H + j] = dh * tc * og * (S(1) - og);
            dhp[j] = S(0);
          }
          break;
        }
        case CellType::kLstmLn: {
          // dy of each LayerNorm output (gate blocks i f g o, then c) goes to dnorm_'s row b (the
          // gain and shift gradients, summed by the caller); each group's input gradient is
          // LayerNorm's transpose: rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * gain.
          const size_t nrow = (row0 + b) * kNormGroups;
          const S* xh = ly.xhat.data() + nrow * H;
          const S* rs = ly.rstd.data() + nrow;
          S* dn = dnorm_.data() + static_cast<size_t>(b) * kNormGroups * H;
          const S* dcn = dc_next_.data() + o;
          S* dcp = dc_prev_.data() + o;
          const S* c_prev = ly.c_prev.data() + so;
          // The row's activations and tanh(c'): stored, or recomputed from the normalized values
          // (kRecomputeActivationsBytes).
          const S* act = a;
          const S* tanh_c = ly.tanh_c.data() + so;
          if (recompute_) {
            gate_math::lstm_ln_activations<S>(H, xh, gain, shift, act_.data());
            act = act_.data();
            tanh_c = act + 4 * H;
          }
          RECUR_INDEPENDENT_ITERATIONS
          for (int j = 0; j < H; ++j) {
            const S og = act[3 * H + j], tc = tanh_c[j];
            const S dh = dho[j] + dhn[j];
            dn[3 * H + j] = dh * tc * og * (S(1) - og);
            dn[4 * H + j] = dcn[j] + dh * og * (S(1) - tc * tc);  // d c' (the normalized state)
          }
          S* dc_raw = dcp;  // LN_c's input gradient, then scaled by f in place
          gate_math::layer_norm_backward<S>(H, dn + 4 * H, xh + 4 * H, gain + 4 * H, rs[4], dc_raw);
          RECUR_INDEPENDENT_ITERATIONS
          for (int j = 0; j < H; ++j) {
            const S i = act[j], f = act[H + j], g = act[2 * H + j];
            const S dc = dc_raw[j];
            dn[j] = dc * g * i * (S(1) - i);
            dn[H + j] = dc * c_prev[j] * f * (S(1) - f);
            dn[2 * H + j] = dc * i * (S(1) - g * g);
            dcp[j] = dc * f;
            dhp[j] = S(0);
          }
          for (int q = 0; q < 4; ++q)
            gate_math::layer_norm_backward<S>(H, dn + q * H, xh + q * H, gain + q * H, rs[q],
                                              dx + q * H);
          break;
        }
        case CellType::kGru: {
          const S* hp = ly.h_prev.data() + so;
          const S* hn = ly.hn.data() + so;
          RECUR_INDEPENDENT_ITERATIONS
          for (int j = 0; j < H; ++j) {
            const S rg = a[j], z = a[H + j], n = a[2 * H + j];
            const S dh = dho[j] + dhn[j];
            const S dan = dh * (S(1) - z) * (S(1) - n * n);
            dx[j] = dr[j] = dan * hn[j] * rg * (S(1) - rg);
            dx[H + j] = dr[H + j] = dh * (hp[j] - n) * z * (S(1) - z);
            dx[2 * H + j] = dan;
            dr[2 * H + j] = dan * rg;
            dhp[j] = dh * z;
          }
          break;
        }
        case CellType::kRnnTanh: {
          const S* h = ly.h.data() + so;
          RECUR_INDEPENDENT_ITERATIONS
          for (int j = 0; j < H; ++j) {
            dx[j] = (dho[j] + dhn[j]) * (S(1) - h[j] * h[j]);
            dhp[j] = S(0);
          }
          break;
        }
        case CellType::kRnnRelu: {
          const S* h = ly.h.data() + so;
          RECUR_INDEPENDENT_ITERATIONS
          for (int j = 0; j < H; ++j) {
            dx[j] = h[j] > S(0) ? dho[j] + dhn[j] : S(0);
            dhp[j] = S(0);
          }
          break;
        }
        case CellType::kMinGru:           // h = h_prev + z (h~ - h_prev); a = [z | h~]
        case CellType::kMinGruHighway: {  // a = [z | h~ | s]; d p is highway_backward's
          const S* hp = ly.h_prev.data() + so;
          RECUR_INDEPENDENT_ITERATIONS
          for (int j = 0; j < H; ++j) {
            const S z = a[j], ht = a[H + j];
            const S dh = dho[j] + dhn[j];
            dx[j] = dh * (ht - hp[j]) * z * (S(1) - z);
            dx[H + j] = dh * z;
            dhp[j] = dh * (S(1) - z);
          }
          break;
        }
      }
    }
  }

  CoreSpec spec_;
  std::vector<Offsets> offsets_;
  AlignedVector<S> params_, grads_;
  std::vector<Layer> layers_;
  std::vector<uint8_t> starts_;
  int t_ = 0, b_ = 0;
  size_t recompute_bytes_ = kRecomputeActivationsBytes;
  bool recompute_ = false;  // lstm_ln: this forward kept no activations for backward
  // Workspaces (grow to the largest (T, B) seen, then reused).
  AlignedVector<S> a_h_, da_x_, da_h_, dh_next_, dc_next_, dh_prev_, dc_prev_, dh_out_, din_;
  AlignedVector<S> act_;    // lstm_ln: (5H) one row's activations i f g o and tanh(c')
  AlignedVector<S> dnorm_;  // lstm_ln: (B, 5H) gradients of the step's LayerNorm outputs
  RowV norm_gain_grad_, norm_shift_grad_;  // lstm_ln: their sums over the steps (5H each)
  AlignedVector<S> dskip_;    // mingru_highway, k >= 1: (T*B, H) d out_{k-1} through the skip
  RowV bias_grad_;            // column sums of the pre-activation gradients: the input side's,
  RowV recurrent_bias_grad_;  // and a GRU's recurrent side's (the others' is the input side's)
  RowV bias_;                 // the layer's b_ih, plus b_hh where the recurrent side adds directly
};

}  // namespace recur::policy
