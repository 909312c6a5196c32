// The minGRU parallel scan's math (kernels/mingru_scan_math.h), run on the CPU exactly as the CUDA
// kernels run it (each (column, chunk) folds, one composition per column, each chunk re-runs from
// its carry), against the CPU sequence executor's sequential scan on the same weights: h,
// the input gradient, the weight and bias gradients and the initial state's gradient, with
// non-zero initial states, resets (at t = 0 too) and T from 1 to 37 (empty chunks when T < 8,
// uneven ones above). It checks the chunking and the carry composition without a GPU.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "core/rng.h"
#include "kernels/mingru_scan_math.h"
#include "policy/convert/flat_layout.h"
#include "policy/cpu/cpu_sequence_executor.h"
#include "tests/support/rel_err.h"

using namespace recur;
using policy::CellType;

namespace {

struct Scanned {
  std::vector<float> h, dx, dh0, grads;  // grads in the canonical flat order (W_ih, b_ih)
};

// One minGRU layer through the chunked scan: zh = X W^T, the three forward passes, then the three
// backward passes from dy, and the GEMM halves written out on the host.
Scanned chunked_scan(const policy::CanonicalWeights& w, int T, int B, const std::vector<float>& x,
                     const std::vector<uint8_t>& starts, const std::vector<float>& h0,
                     const std::vector<float>& dy) {
  const int H = w.spec.hidden, in = w.spec.input;
  const size_t tb = static_cast<size_t>(T) * B, zw = 2 * static_cast<size_t>(H);
  const std::vector<float>& W = w.layers[0].weight_ih;  // (2H, in)
  const std::vector<float>& bias = w.layers[0].bias_ih;
  std::vector<float> zh(tb * zw, 0.0f);
  for (size_t r = 0; r < tb; ++r)
    for (size_t g = 0; g < zw; ++g)
      for (int i = 0; i < in; ++i) zh[r * zw + g] += x[r * in + i] * W[g * in + i];
  Scanned out;
  out.h.assign(tb * H, 0.0f);
  std::vector<float> h_prev(tb * H, 0.0f), dzh(tb * zw, 0.0f);
  out.dh0.assign(static_cast<size_t>(B) * H, 0.0f);
  std::vector<float> A(kernels::kScanChunks), Bc(kernels::kScanChunks);
  for (int b = 0; b < B; ++b)
    for (int j = 0; j < H; ++j) {
      const kernels::ScanColumn c{T, B, H, b, j};
      const size_t col = static_cast<size_t>(b) * H + j;
      for (int k = 0; k < kernels::kScanChunks; ++k) {
        int t0 = 0, t1 = 0;
        kernels::mingru_chunk_range(T, k, t0, t1);
        kernels::mingru_fold_forward(c, t0, t1, zh.data(), bias.data(), starts.data(), A[k], Bc[k]);
      }
      kernels::mingru_compose_forward(A.data(), Bc.data(), 1, h0[col]);
      for (int k = 0; k < kernels::kScanChunks; ++k) {
        int t0 = 0, t1 = 0;
        kernels::mingru_chunk_range(T, k, t0, t1);
        kernels::mingru_chunk_forward(c, t0, t1, zh.data(), starts.data(), A[k], h_prev.data(),
                                      out.h.data());
      }
      for (int k = 0; k < kernels::kScanChunks; ++k) {
        int t0 = 0, t1 = 0;
        kernels::mingru_chunk_range(T, k, t0, t1);
        kernels::mingru_fold_backward(c, t0, t1, zh.data(), starts.data(), dy.data(), A[k], Bc[k]);
      }
      out.dh0[col] = kernels::mingru_compose_backward(A.data(), Bc.data(), 1);
      for (int k = 0; k < kernels::kScanChunks; ++k) {
        int t0 = 0, t1 = 0;
        kernels::mingru_chunk_range(T, k, t0, t1);
        kernels::mingru_chunk_backward(c, t0, t1, zh.data(), starts.data(), h_prev.data(),
                                       dy.data(), A[k], dzh.data());
      }
    }
  // The GEMM halves: dx = dzh W, dW = dzh^T X, db = column sums of dzh.
  out.dx.assign(tb * in, 0.0f);
  std::vector<float> dW(zw * in, 0.0f), db(zw, 0.0f);
  for (size_t r = 0; r < tb; ++r)
    for (size_t g = 0; g < zw; ++g) {
      const float d = dzh[r * zw + g];
      db[g] += d;
      for (int i = 0; i < in; ++i) {
        out.dx[r * in + i] += d * W[g * in + i];
        dW[g * in + i] += d * x[r * in + i];
      }
    }
  out.grads = dW;
  out.grads.insert(out.grads.end(), db.begin(), db.end());
  return out;
}

}  // namespace

TEST_CASE("the chunked minGRU scan equals the sequence engine's sequential scan") {
  for (int T : {1, 5, 7, 8, 9, 37}) {
    CAPTURE(T);
    const int B = 3;
    const policy::CoreSpec spec{CellType::kMinGru, 3, 4, 1, 0};
    Rng rng(100 + static_cast<uint64_t>(T));
    const policy::CanonicalWeights w = policy::CanonicalWeights::random(spec, rng);
    const size_t tb = static_cast<size_t>(T) * B;
    std::vector<float> x(tb * spec.input), h0(static_cast<size_t>(B) * spec.hidden),
        dy(tb * spec.hidden);
    for (auto& e : x) e = static_cast<float>(rng.uniform(-1.5, 1.5));
    for (auto& e : h0) e = static_cast<float>(rng.uniform(-0.9, 0.9));  // non-zero
    for (auto& e : dy) e = static_cast<float>(rng.uniform(-1.0, 1.0));
    std::vector<uint8_t> starts(tb, 0);
    starts[1] = 1;  // env 1 starts an episode at t = 0
    for (size_t i = B; i < tb; ++i) starts[i] = rng.uniform() < 0.15 ? 1 : 0;

    policy::CpuSequenceExecutor cpu(spec);
    cpu.load(w);
    std::vector<float> y(tb * spec.hidden), dx(tb * spec.input), d0(h0.size());
    cpu.forward(T, B, x, starts, h0, y);
    cpu.zero_gradients();
    cpu.backward(dy, dx, d0);
    const std::vector<float> grads = policy::flatten(cpu.gradients());

    const Scanned s = chunked_scan(w, T, B, x, starts, h0, dy);
    // Float on both sides; the chunk carries compose affine maps (another rounding order than
    // the sequential update) and Eigen's logistic is not expf's: a few ulps.
    CHECK(test::rel_err(s.h, y) < 1e-5);
    CHECK(test::rel_err(s.dx, dx) < 1e-5);
    CHECK(test::rel_err(s.dh0, d0) < 1e-5);
    CHECK(test::rel_err(s.grads, grads) < 1e-5);
    // Env 1's initial state is never read (it starts at t = 0): no gradient reaches it.
    for (int j = 0; j < spec.hidden; ++j)
      CHECK(s.dh0[static_cast<size_t>(spec.hidden) + j] == 0.0f);
  }
}
