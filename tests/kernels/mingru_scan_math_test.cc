// The minGRU parallel scan's math and mingru_highway's highway (kernels/mingru_scan_math.h), run
// on the CPU exactly as the CUDA kernels run them (each (column, chunk) folds, one composition per
// column, each chunk re-runs from its carry; the highway per element after the scan and its
// transpose before the reverse scan), against the CPU sequence executor on the same weights, for
// 1 and 2 layers: the output, the input gradient, the weight and bias gradients and the initial
// state's gradient, with non-zero initial states, resets (at t = 0 too) and T from 1 to 37
// (empty chunks when T < 8, uneven ones above). It checks the GPU's math without a GPU.
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

// f(q, t0, t1) for every time chunk q of T, as the kernels' threadIdx.y rows run them.
template <typename F>
void for_each_chunk(int T, F f) {
  for (int q = 0; q < kernels::kScanChunks; ++q) {
    int t0 = 0, t1 = 0;
    kernels::mingru_chunk_range(T, q, t0, t1);
    f(q, t0, t1);
  }
}

struct Scanned {
  std::vector<float> h, dx, dh0, grads;  // grads in the canonical flat order (W_ih, b_ih per layer)
};

// A minGRU stack through the chunked scan, layer by layer as the CUDA sequence executor runs it:
// zh = X W^T, the three forward passes, then (mingru_highway) the highway per element or
// (mingru, k >= 1) the residual sum; backward from dy in reverse, the highway's transpose before
// the three backward passes; the GEMM halves written out on the host. h is the core's output.
Scanned chunked_scan(const policy::CanonicalWeights& w, int T, int B, const std::vector<float>& x,
                     const std::vector<uint8_t>& starts, const std::vector<float>& h0,
                     const std::vector<float>& dy) {
  const policy::CoreSpec& spec = w.spec;
  const int H = spec.hidden, G = spec.gates(), L = spec.layers;
  const bool highway = policy::has_highway_stack(spec.cell);
  const size_t tb = static_cast<size_t>(T) * B, zw = static_cast<size_t>(G) * H;
  const size_t ss = static_cast<size_t>(spec.state_size());
  struct Layer {
    std::vector<float> input, zh, h_prev, h, out;
  };
  std::vector<Layer> ly(static_cast<size_t>(L));
  std::vector<float> A(kernels::kScanChunks), Bc(kernels::kScanChunks);
  for (int k = 0; k < L; ++k) {
    Layer& l = ly[static_cast<size_t>(k)];
    const int in = spec.layer_input(k);
    l.input = k == 0 ? x : ly[static_cast<size_t>(k - 1)].out;
    const std::vector<float>& W = w.layers[static_cast<size_t>(k)].weight_ih;  // (G*H, in)
    const std::vector<float>& bias = w.layers[static_cast<size_t>(k)].bias_ih;
    l.zh.assign(tb * zw, 0.0f);
    for (size_t r = 0; r < tb; ++r)
      for (size_t g = 0; g < zw; ++g)
        for (int i = 0; i < in; ++i) l.zh[r * zw + g] += l.input[r * in + i] * W[g * in + i];
    l.h.assign(tb * H, 0.0f);
    l.h_prev.assign(tb * H, 0.0f);
    for (int b = 0; b < B; ++b)
      for (int j = 0; j < H; ++j) {
        const kernels::ScanColumn c{T, B, H, b, j, G};
        for_each_chunk(T, [&](int q, int t0, int t1) {
          kernels::mingru_fold_forward(c, t0, t1, l.zh.data(), bias.data(), starts.data(), A[q],
                                       Bc[q]);
        });
        kernels::mingru_compose_forward(A.data(), Bc.data(), 1,
                                        h0[static_cast<size_t>(b) * ss + k * H + j]);
        for_each_chunk(T, [&](int q, int t0, int t1) {
          kernels::mingru_chunk_forward(c, t0, t1, l.zh.data(), starts.data(), A[q],
                                        l.h_prev.data(), l.h.data());
        });
      }
    l.out = l.h;
    for (size_t r = 0; r < tb; ++r)
      for (int j = 0; j < H; ++j) {
        const size_t i = r * H + j;
        if (highway)
          l.out[i] = kernels::highway_forward_at(l.zh[r * zw + 2 * H + j], bias[2 * H + j], l.h[i],
                                                 k > 0 ? &l.input[i] : nullptr);
        else if (k > 0)
          l.out[i] = l.h[i] + l.input[i];
      }
  }
  Scanned out;
  out.h = ly.back().out;
  out.dh0.assign(static_cast<size_t>(B) * ss, 0.0f);
  std::vector<float> dout = dy;
  std::vector<std::vector<float>> grads(static_cast<size_t>(L));
  for (int k = L - 1; k >= 0; --k) {
    Layer& l = ly[static_cast<size_t>(k)];
    const int in = spec.layer_input(k);
    std::vector<float> dzh(tb * zw, 0.0f), dskip(tb * H, 0.0f);
    if (highway)
      for (size_t r = 0; r < tb; ++r)
        for (int j = 0; j < H; ++j) {
          const size_t i = r * H + j;
          kernels::highway_backward_at(l.zh[r * zw + 2 * H + j], l.h[i],
                                       k > 0 ? &l.input[i] : nullptr, dout[i],
                                       dzh[r * zw + 2 * H + j], k > 0 ? &dskip[i] : nullptr);
        }
    else if (k > 0)
      dskip = dout;  // the residual skip
    for (int b = 0; b < B; ++b)
      for (int j = 0; j < H; ++j) {
        const kernels::ScanColumn c{T, B, H, b, j, G};
        for_each_chunk(T, [&](int q, int t0, int t1) {
          kernels::mingru_fold_backward(c, t0, t1, l.zh.data(), starts.data(), dout.data(), A[q],
                                        Bc[q]);
        });
        out.dh0[static_cast<size_t>(b) * ss + k * H + j] =
            kernels::mingru_compose_backward(A.data(), Bc.data(), 1);
        for_each_chunk(T, [&](int q, int t0, int t1) {
          kernels::mingru_chunk_backward(c, t0, t1, l.zh.data(), starts.data(), l.h_prev.data(),
                                         dout.data(), A[q], dzh.data());
        });
      }
    // The GEMM halves: din = dzh W (+ the skip), dW = dzh^T X, db = column sums of dzh.
    const std::vector<float>& W = w.layers[static_cast<size_t>(k)].weight_ih;
    std::vector<float> din(tb * in, 0.0f), dW(zw * in, 0.0f), db(zw, 0.0f);
    for (size_t r = 0; r < tb; ++r)
      for (size_t g = 0; g < zw; ++g) {
        const float d = dzh[r * zw + g];
        db[g] += d;
        for (int i = 0; i < in; ++i) {
          din[r * in + i] += d * W[g * in + i];
          dW[g * in + i] += d * l.input[r * in + i];
        }
      }
    if (k > 0)
      for (size_t i = 0; i < din.size(); ++i) din[i] += dskip[i];
    grads[static_cast<size_t>(k)] = dW;
    grads[static_cast<size_t>(k)].insert(grads[static_cast<size_t>(k)].end(), db.begin(), db.end());
    dout = din;
  }
  out.dx = dout;
  for (const auto& g : grads) out.grads.insert(out.grads.end(), g.begin(), g.end());
  return out;
}

}  // namespace

TEST_CASE("the chunked minGRU scan equals the sequence engine's sequential scan") {
  for (CellType cell : {CellType::kMinGru, CellType::kMinGruHighway})
    for (int layers : {1, 2})
      for (int T : {1, 5, 7, 8, 9, 37}) {
        CAPTURE(policy::to_string(cell));
        CAPTURE(layers);
        CAPTURE(T);
        const int B = 3;
        const policy::CoreSpec spec{cell, 3, 4, layers, 0};
        Rng rng(100 + static_cast<uint64_t>(T));
        const policy::CanonicalWeights w = policy::CanonicalWeights::random(spec, rng);
        const size_t tb = static_cast<size_t>(T) * B;
        std::vector<float> x(tb * spec.input), h0(static_cast<size_t>(B) * spec.state_size()),
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
        for (int i = 0; i < spec.state_size(); ++i)
          CHECK(s.dh0[static_cast<size_t>(spec.state_size()) + i] == 0.0f);
      }
}
