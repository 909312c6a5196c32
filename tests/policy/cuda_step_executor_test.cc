// The CUDA step executor (policy/cuda/) against its CPU twin, CpuStepExecutor: same canonical
// weights, non-zero initial states, T >= 5 steps with random episode starts (including t = 0),
// every cell type, 1-3 layers, B = 1 and odd sizes. Also: the weight round trip, graph replay ==
// the plain launch path bit for bit, run-to-run determinism, per-slot state access between graph
// replays, and load_device from device-resident weights in another layout.
//
// Tolerance 1e-5 relative (norm of the difference / norm of the CPU result): both sides are fp32
// but sum the GEMM in different orders (cuBLAS vs Eigen tiles, FMA or not) and use different,
// accurate few-ulp expf/tanhf implementations, which keeps them ~1e-6 apart over a few steps; a
// wrong gate, bias, clip or reset gives errors of order 1e-1.
//
// Compiled in every build; without CUDA support or without a usable GPU each case prints
// "[skip] ..." and ctest reports it as skipped.
#include <doctest/doctest.h>

#include <cstdio>

#include "policy/devices.h"
#include "tests/support/skip.h"

#ifdef RECUR_WITH_CUDA

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "core/rng.h"
#include "kernels/cuda_memory.h"
#include "policy/convert/flat_layout.h"
#include "policy/cpu/cpu_step_executor.h"
#include "policy/cuda/cuda_step_executor.h"
#include "tests/support/gpu_skip.h"
#include "tests/support/rel_err.h"

using namespace recur::policy;

namespace {

// Inputs of one run: weights, initial states (B, S), x (T, B, in), episode_start (T, B).
struct Run {
  CoreSpec spec;
  int T = 0, B = 0;
  CanonicalWeights w;
  std::vector<float> state0, x;
  std::vector<uint8_t> starts;

  std::span<const float> x_at(int t) const {
    const size_t n = static_cast<size_t>(B) * spec.input;
    return std::span(x).subspan(static_cast<size_t>(t) * n, n);
  }
  std::span<const uint8_t> starts_at(int t) const {
    return std::span(starts).subspan(static_cast<size_t>(t) * B, static_cast<size_t>(B));
  }
};

Run make_run(const CoreSpec& spec, int B, uint64_t seed, int T = 7) {
  Run r;
  r.spec = spec;
  r.T = T;
  r.B = B;
  recur::Rng rng(seed);
  r.w = CanonicalWeights::random(spec, rng);
  for (auto& l : r.w.layers) {  // lstm_ln: gains and shifts away from their 1 / 0 init
    for (auto& v : l.norm_weight) v = static_cast<float>(rng.uniform(0.5, 1.5));
    for (auto& v : l.norm_bias) v = static_cast<float>(rng.uniform(-0.5, 0.5));
  }
  r.state0.resize(static_cast<size_t>(B) * spec.state_size());
  for (auto& v : r.state0) v = static_cast<float>(rng.uniform(-0.9, 0.9));  // non-zero
  r.x.resize(static_cast<size_t>(T) * B * spec.input);
  for (auto& v : r.x) v = static_cast<float>(rng.uniform(-1.5, 1.5));
  r.starts.assign(static_cast<size_t>(T) * B, 0);
  for (auto& s : r.starts) s = rng.uniform() < 0.2 ? 1 : 0;
  r.starts[0] = 1;  // slot 0 restarts at t = 0: its initial state must not matter
  return r;
}

// Loads, sets the initial states, steps T times: y (T, B, H) and the final states (B, S).
struct Result {
  std::vector<float> y, states;
};
Result drive(StepExecutor& e, const Run& r) {
  Result out;
  const size_t hb = static_cast<size_t>(r.B) * r.spec.hidden;
  out.y.resize(static_cast<size_t>(r.T) * hb);
  e.load(r.w);
  e.set_states(r.state0);
  for (int t = 0; t < r.T; ++t)
    e.step(r.x_at(t), r.starts_at(t), std::span(out.y).subspan(static_cast<size_t>(t) * hb, hb));
  out.states.resize(r.state0.size());
  e.get_states(out.states);
  return out;
}

using recur::test::rel_err;

struct Variant {
  CellType cell;
  float clip;
};
const Variant kVariants[] = {{CellType::kLstm, 0.0f},    {CellType::kLstm, 0.5f},
                             {CellType::kGru, 0.0f},     {CellType::kRnnTanh, 0.0f},
                             {CellType::kRnnRelu, 0.0f}, {CellType::kLstmLn, 0.0f},
                             {CellType::kMinGru, 0.0f},  {CellType::kMinGruHighway, 0.0f}};

CudaStepOptions options(bool graph, StepIo io = StepIo::kCopy) {
  CudaStepOptions o;
  o.use_graph = graph;
  o.io = io;
  return o;
}

}  // namespace

TEST_CASE("cuda step executor equals the cpu step executor") {
  if (!recur::test::gpu_or_skip("cuda step executor equals the cpu step executor")) return;
  for (const Variant& v : kVariants) {
    for (int layers = 1; layers <= 3; ++layers) {
      for (int B : {1, 5, 37}) {
        for (bool graph : {false, true}) {
          CAPTURE(to_string(v.cell));
          CAPTURE(v.clip);
          CAPTURE(layers);
          CAPTURE(B);
          CAPTURE(graph);
          const CoreSpec spec{v.cell, 7, 12, layers, v.clip};
          const Run r = make_run(spec, B, 100 + static_cast<uint64_t>(layers * 10 + B));
          CpuStepExecutor cpu(spec, B);
          CudaStepExecutor gpu(spec, B, options(graph));
          const Result want = drive(cpu, r), got = drive(gpu, r);
          CHECK(rel_err(got.y, want.y) <= 1e-5);
          CHECK(rel_err(got.states, want.states) <= 1e-5);
        }
      }
    }
  }
}

TEST_CASE("cuda step executor equals the cpu step executor at larger sizes") {
  if (!recur::test::gpu_or_skip("cuda step executor equals the cpu step executor at larger sizes"))
    return;
  // K up to 2H = 256 and several GEMM tiles per dimension.
  for (const Variant& v : kVariants) {
    CAPTURE(to_string(v.cell));
    CAPTURE(v.clip);
    const CoreSpec spec{v.cell, 33, 128, 2, v.clip};
    const int B = 131;
    const Run r = make_run(spec, B, 7, 6);
    CpuStepExecutor cpu(spec, B);
    CudaStepExecutor gpu(spec, B, options(true));
    const Result want = drive(cpu, r), got = drive(gpu, r);
    CHECK(rel_err(got.y, want.y) <= 1e-5);
    CHECK(rel_err(got.states, want.states) <= 1e-5);
  }
}

TEST_CASE("cuda step executor weights round trip exactly") {
  if (!recur::test::gpu_or_skip("cuda step executor weights round trip exactly")) return;
  for (const Variant& v : kVariants) {
    for (int layers = 1; layers <= 3; ++layers) {
      CAPTURE(to_string(v.cell));
      CAPTURE(layers);
      const CoreSpec spec{v.cell, 5, 9, layers, v.clip};
      recur::Rng rng(3);
      const CanonicalWeights w = CanonicalWeights::random(spec, rng);
      CudaStepExecutor gpu(spec, 4, options(true));
      gpu.load(w);
      CHECK(gpu.weights() == w);
    }
  }
}

TEST_CASE("cuda step executor graph replay equals the plain launch path bitwise") {
  if (!recur::test::gpu_or_skip(
          "cuda step executor graph replay equals the plain launch path bitwise"))
    return;
  for (const Variant& v : kVariants) {
    CAPTURE(to_string(v.cell));
    const CoreSpec spec{v.cell, 6, 16, 2, v.clip};
    const Run r = make_run(spec, 9, 21, 8);
    CudaStepExecutor plain(spec, r.B, options(false)), graph(spec, r.B, options(true));
    const Result a = drive(plain, r), b = drive(graph, r);
    CHECK(a.y == b.y);
    CHECK(a.states == b.states);
  }
}

// Zero-copy I/O (kernels/mapped_io.h): the fused prepare kernel and the mapped blocks must give
// the copy path's values to the bit, for every cell, 1-3 layers, and B large enough (300 x 16
// floats of h) that the fetch and emit kernels run several blocks; with per-slot state access.
TEST_CASE("cuda step executor zero-copy I/O equals the copy path bitwise") {
  if (!recur::test::gpu_or_skip("cuda step executor zero-copy I/O equals the copy path bitwise"))
    return;
  for (const Variant& v : kVariants)
    for (int layers = 1; layers <= 3; ++layers)
      for (int B : {1, 300})
        for (bool graph : {false, true}) {
          CAPTURE(to_string(v.cell));
          CAPTURE(layers);
          CAPTURE(B);
          CAPTURE(graph);
          const CoreSpec spec{v.cell, 6, 16, layers, v.clip};
          const Run r = make_run(spec, B, 31 + static_cast<uint64_t>(layers), 7);
          CudaStepExecutor copy(spec, B, options(true)),
              mapped(spec, B, options(graph, StepIo::kMapped));
          const Result a = drive(copy, r), b = drive(mapped, r);
          CHECK(a.y == b.y);
          CHECK(a.states == b.states);
          // Per-slot state access and reset between mapped steps, against the copy path.
          for (CudaStepExecutor* e : {&copy, &mapped}) {
            e->reset(0);
            e->set_state(B - 1, std::span(r.state0).first(static_cast<size_t>(spec.state_size())));
          }
          const size_t hb = static_cast<size_t>(B) * spec.hidden;
          std::vector<float> y1(hb), y2(hb);
          copy.step(r.x_at(0), r.starts_at(1), y1);
          mapped.step(r.x_at(0), r.starts_at(1), y2);
          CHECK(y1 == y2);
        }
}

TEST_CASE("cuda step executor repeated runs are bitwise identical") {
  if (!recur::test::gpu_or_skip("cuda step executor repeated runs are bitwise identical")) return;
  const CoreSpec spec{CellType::kLstm, 6, 32, 3, 0.5f};
  const Run r = make_run(spec, 17, 5, 9);
  CudaStepExecutor first(spec, r.B, options(true));
  const Result a = drive(first, r);
  const Result again = drive(first, r);  // same executor, graph already captured
  CudaStepExecutor second(spec, r.B, options(true));
  const Result b = drive(second, r);
  CHECK(a.y == again.y);
  CHECK(a.states == again.states);
  CHECK(a.y == b.y);
  CHECK(a.states == b.states);
}

TEST_CASE("cuda step executor state get set and reset per slot work with the graph") {
  if (!recur::test::gpu_or_skip(
          "cuda step executor state get set and reset per slot work with the graph"))
    return;
  for (const Variant& v : kVariants) {
    CAPTURE(to_string(v.cell));
    const CoreSpec spec{v.cell, 4, 10, 2, v.clip};
    const Run r = make_run(spec, 6, 31, 8);
    const auto S = static_cast<size_t>(spec.state_size());
    const size_t hb = static_cast<size_t>(r.B) * spec.hidden;
    CpuStepExecutor cpu(spec, r.B);
    CudaStepExecutor gpu(spec, r.B, options(true));
    for (StepExecutor* e : {static_cast<StepExecutor*>(&cpu), static_cast<StepExecutor*>(&gpu)}) {
      e->load(r.w);
      e->set_states(r.state0);
    }
    recur::Rng rng(8);
    std::vector<float> injected(S), got(S), zeros(S, 0.0f);
    for (auto& x : injected) x = static_cast<float>(rng.uniform(-0.9, 0.9));
    std::vector<float> y_cpu(hb), y_gpu(hb), s_cpu(S * r.B), s_gpu(S * r.B);
    for (int t = 0; t < r.T; ++t) {
      if (t == 3) {  // after the graph was captured (step 0) and replayed (steps 1, 2)
        cpu.set_state(2, injected);
        gpu.set_state(2, injected);
        gpu.get_state(2, got);
        CHECK(got == injected);
        cpu.reset(4);
        gpu.reset(4);
        gpu.get_state(4, got);
        CHECK(got == zeros);
      }
      cpu.step(r.x_at(t), r.starts_at(t), y_cpu);
      gpu.step(r.x_at(t), r.starts_at(t), y_gpu);
      CAPTURE(t);
      CHECK(rel_err(y_gpu, y_cpu) <= 1e-5);
      cpu.get_states(s_cpu);
      gpu.get_states(s_gpu);
      CHECK(rel_err(s_gpu, s_cpu) <= 1e-5);
    }
  }
}

TEST_CASE("cuda step executor load_device equals load of canonical weights") {
  if (!recur::test::gpu_or_skip("cuda step executor load_device equals load of canonical weights"))
    return;
  for (const Variant& v : kVariants) {
    CAPTURE(to_string(v.cell));
    const CoreSpec spec{v.cell, 5, 12, 2, v.clip};
    const Run r = make_run(spec, 7, 61, 6);
    recur::Rng rng(62);
    const CanonicalWeights w2 = CanonicalWeights::random(spec, rng);
    const std::vector<float> flat2 = flatten(w2);

    // Two source layouts: canonical, and a reversed one with a gap at the front (not the
    // identity, and a second layout exercises the index cache's invalidation).
    const FlatLayout canonical = canonical_layout(spec);
    FlatLayout reversed;
    reversed.name = "reversed";
    const auto n = static_cast<int64_t>(flat2.size());
    reversed.size = n + 3;
    for (int64_t i = 0; i < n; ++i) reversed.position.push_back(reversed.size - 1 - i);
    std::vector<float> reversed_host(static_cast<size_t>(reversed.size));
    scatter_canonical(reversed, flat2, reversed_host);

    recur::kernels::CudaStream src_stream;
    recur::kernels::DeviceBuffer<float> src(flat2.size()), src_reversed(reversed_host.size());
    src.upload(flat2, src_stream.get());
    src_reversed.upload(reversed_host, src_stream.get());  // ordered by load_device's wait

    // One pair of executors for both layouts: the second layout must replace the cached index.
    CudaStepExecutor by_device(spec, r.B, options(true)), by_host(spec, r.B, options(false));
    const size_t hb = static_cast<size_t>(r.B) * spec.hidden;
    std::vector<float> ya(hb), yb(hb);
    const FlatLayout* const layouts[] = {&canonical, &reversed};
    for (const FlatLayout* layout : layouts) {
      CAPTURE(layout->name);
      const float* device_src = layout == &canonical ? src.data() : src_reversed.data();
      // Both run on r.w (the graph is captured), then switch to w2 mid-run.
      const Result a = drive(by_device, r), b = drive(by_host, r);
      CHECK(a.y == b.y);
      by_device.load_device(device_src, *layout, src_stream.get());
      by_host.load(w2);
      CHECK(by_device.weights() == w2);
      for (int t = 0; t < r.T; ++t) {
        by_device.step(r.x_at(t), r.starts_at(t), ya);
        by_host.step(r.x_at(t), r.starts_at(t), yb);
        CHECK(ya == yb);
      }
      // The same layout again: the cached index.
      by_device.load(r.w);
      by_device.load_device(device_src, *layout, src_stream.get());
      CHECK(by_device.weights() == w2);
    }
  }
}

#else  // no CUDA in this build

TEST_CASE("cuda step executor tests need a CUDA build") {
  recur::test::skip("cuda step executor: no usable GPU: " +
                    recur::policy::query_devices().gpu_unavailable);
}

#endif
