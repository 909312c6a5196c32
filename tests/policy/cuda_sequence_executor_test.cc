// The fused CUDA sequence executor (policy/cuda/cuda_sequence_executor.h: lstm_ln and mingru)
// against the CPU sequence executor on the same canonical weights: 1-3 layers, random non-zero
// initial states, resets (at t = 0 too), T = 7 and T = 37 (several scan chunks, uneven), forward
// (y, final state) and backward (dx, the initial state's gradient, every parameter gradient); the
// device-resident calls (host states and a device state table) against the host-span ones;
// gradient accumulation; make_device_sequence's choice. Every case skips itself (with a message)
// without a usable GPU; in a CPU-only build the executor does not exist. The scan's chunk math is
// also checked on the CPU in CI (tests/kernels/mingru_scan_math_test.cc).
#include <doctest/doctest.h>

#include <cstdio>

#include "tests/support/skip.h"

#ifdef RECUR_WITH_CUDA

#include <cstring>
#include <span>
#include <vector>

#include "core/rng.h"
#include "kernels/cuda_memory.h"
#include "policy/convert/flat_layout.h"
#include "policy/cpu/cpu_sequence_executor.h"
#include "policy/cuda/cuda_sequence_executor.h"
#include "policy/cudnn/cudnn_sequence_executor.h"
#include "tests/support/gpu_skip.h"
#include "tests/support/rel_err.h"

using namespace recur::policy;
using recur::test::rel_err;

namespace {

struct Problem {
  CoreSpec spec;
  int T = 7, B = 5;
  CanonicalWeights w;
  std::vector<float> x, state0, dy;
  std::vector<uint8_t> starts;
};

Problem make_problem(CellType cell, int layers, uint64_t seed, int T = 7, int B = 5,
                     int hidden = 8) {
  Problem p;
  p.spec = {cell, 5, hidden, layers, 0};
  p.T = T;
  p.B = B;
  recur::Rng rng(seed);
  p.w = CanonicalWeights::random(p.spec, rng, 1.0f);
  const size_t tb = static_cast<size_t>(T) * B;
  p.x.resize(tb * p.spec.input);
  for (auto& e : p.x) e = static_cast<float>(rng.uniform(-1.5, 1.5));
  p.state0.resize(static_cast<size_t>(B) * p.spec.state_size());
  for (auto& e : p.state0) e = static_cast<float>(rng.uniform(-0.9, 0.9));  // non-zero
  p.dy.resize(tb * p.spec.hidden);
  for (auto& e : p.dy) e = static_cast<float>(rng.uniform(-1.0, 1.0));
  p.starts.assign(tb, 0);
  p.starts[1] = 1;  // env 1 starts an episode at t = 0
  for (size_t i = static_cast<size_t>(B); i < tb; ++i) p.starts[i] = rng.uniform() < 0.2 ? 1 : 0;
  p.starts[static_cast<size_t>(3) * B] = 1;  // env 0 restarts at t = 3 and t = 4
  p.starts[static_cast<size_t>(4) * B] = 1;
  return p;
}

struct Outputs {
  std::vector<float> y, final_state, dx, d_state0, grads;
};

Outputs run(SequenceExecutor& ex, const Problem& p) {
  Outputs o;
  const size_t tb = static_cast<size_t>(p.T) * p.B;
  o.y.resize(tb * p.spec.hidden);
  o.final_state.resize(p.state0.size());
  o.dx.resize(tb * p.spec.input);
  o.d_state0.resize(p.state0.size());
  ex.load(p.w);
  ex.forward(p.T, p.B, p.x, p.starts, p.state0, o.y, o.final_state);
  ex.zero_gradients();
  ex.backward(p.dy, o.dx, o.d_state0);
  o.grads = flatten(ex.gradients());
  return o;
}

// float32 on both sides, FMA math, no TF32. minGRU differs by the GEMMs' and the scan chunks'
// summation order: 1e-5. The layer norms of lstm_ln divide by a row's standard deviation, which
// magnifies the summation-order rounding of its mean where the variance is small: 1e-4 (as its
// ONNX export, tests/python/test_onnx_export.py).
double tol(CellType cell) {
  return cell == CellType::kLstmLn ? 1e-4 : 1e-5;
}

}  // namespace

TEST_CASE("cuda sequence executor forward and backward equal the CPU executor") {
  if (!recur::test::gpu_or_skip("cuda sequence executor parity")) return;
  for (CellType cell : {CellType::kMinGru, CellType::kMinGruHighway, CellType::kLstmLn})
    for (int layers = 1; layers <= 3; ++layers)
      for (int T : {7, 37}) {
        CAPTURE(to_string(cell));
        CAPTURE(layers);
        CAPTURE(T);
        const Problem p = make_problem(cell, layers, 40 + static_cast<uint64_t>(layers), T, 9);
        CpuSequenceExecutor cpu(p.spec);
        CudaSequenceExecutor gpu(p.spec);
        const Outputs a = run(cpu, p), b = run(gpu, p);
        const double e = tol(cell);
        CHECK(rel_err(b.y, a.y) < e);
        CHECK(rel_err(b.final_state, a.final_state) < e);
        CHECK(rel_err(b.dx, a.dx) < e);
        CHECK(rel_err(b.d_state0, a.d_state0) < e);
        CHECK(rel_err(b.grads, a.grads) < e);
        CHECK(flatten(gpu.weights()) == flatten(p.w));  // the canonical layout round trip
      }
}

// Wider than the case above: H 200 runs the layer-norm kernels' loop over units past one
// block's 128 threads and the scan's 32-column blocks with a partial last one (H not a multiple
// of 32), over several full blocks. Longer sums (200 + 5 terms a GEMM, 200 a layer norm) round
// more: 5x the small case's tolerance.
TEST_CASE("cuda sequence executor equals the CPU executor at H 200") {
  if (!recur::test::gpu_or_skip("cuda sequence executor parity, H 200")) return;
  for (CellType cell : {CellType::kMinGru, CellType::kMinGruHighway, CellType::kLstmLn}) {
    CAPTURE(to_string(cell));
    const Problem p = make_problem(cell, 2, 77, 37, 7, 200);
    CpuSequenceExecutor cpu(p.spec);
    CudaSequenceExecutor gpu(p.spec);
    const Outputs a = run(cpu, p), b = run(gpu, p);
    const double e = 5 * tol(cell);
    CHECK(rel_err(b.y, a.y) < e);
    CHECK(rel_err(b.final_state, a.final_state) < e);
    CHECK(rel_err(b.dx, a.dx) < e);
    CHECK(rel_err(b.d_state0, a.d_state0) < e);
    CHECK(rel_err(b.grads, a.grads) < e);
  }
}

TEST_CASE("cuda sequence executor: device-resident calls equal the host-span ones") {
  if (!recur::test::gpu_or_skip("cuda sequence executor device-resident")) return;
  for (CellType cell : {CellType::kMinGru, CellType::kMinGruHighway, CellType::kLstmLn}) {
    CAPTURE(to_string(cell));
    const Problem p = make_problem(cell, 2, 77, 9, 6);
    CudaSequenceExecutor host(p.spec);
    const Outputs ref = run(host, p);

    CudaSequenceExecutor dev(p.spec);
    dev.load(p.w);
    dev.set_device_resident(true);
    const size_t tb = static_cast<size_t>(p.T) * p.B;
    const int S = p.spec.state_size();
    cudaStream_t st = dev.stream();
    recur::kernels::DeviceBuffer<float> x(tb * p.spec.input), y(tb * p.spec.hidden),
        dy(tb * p.spec.hidden), dx(tb * p.spec.input);
    x.upload(p.x, st);
    dy.upload(p.dy, st);
    std::vector<float> out(tb * p.spec.hidden), out_dx(tb * p.spec.input);

    // Host initial states.
    dev.forward_device(p.T, p.B, x.data(), p.starts, p.state0, y.data());
    y.download(out, st);
    CUDA_CHECK(cudaStreamSynchronize(st));
    CHECK(rel_err(out, ref.y) == 0.0);

    // A device table of stored states, rows in reverse order with a stride wider than S.
    const int stride = S + 3;
    std::vector<float> table(static_cast<size_t>(p.B) * stride, -7.0f);
    std::vector<int32_t> rows(static_cast<size_t>(p.B));
    for (int b = 0; b < p.B; ++b) {
      rows[static_cast<size_t>(b)] = p.B - 1 - b;
      std::memcpy(table.data() + static_cast<size_t>(p.B - 1 - b) * stride,
                  p.state0.data() + static_cast<size_t>(b) * S, S * sizeof(float));
    }
    recur::kernels::DeviceBuffer<float> d_table(table.size());
    d_table.upload(table, st);
    DeviceSequenceExecutor::DeviceStateTable t;
    t.table = d_table.data();
    t.stride = static_cast<size_t>(stride);
    t.rows = rows;
    CUDA_CHECK(cudaMemsetAsync(dev.device_gradients(), 0,
                               static_cast<size_t>(dev.layout().size) * sizeof(float), st));
    dev.forward_device(p.T, p.B, x.data(), p.starts, t, y.data());
    dev.backward_device(dy.data(), dx.data());
    y.download(out, st);
    dx.download(out_dx, st);
    CUDA_CHECK(cudaStreamSynchronize(st));
    CHECK(rel_err(out, ref.y) == 0.0);  // the same kernels on the same inputs
    CHECK(rel_err(out_dx, ref.dx) == 0.0);
    CHECK(rel_err(flatten(dev.gradients()), ref.grads) == 0.0);
  }
}

TEST_CASE("cuda sequence executor: gradients add up over backward calls") {
  if (!recur::test::gpu_or_skip("cuda sequence executor accumulation")) return;
  for (CellType cell : {CellType::kMinGru, CellType::kMinGruHighway, CellType::kLstmLn}) {
    CAPTURE(to_string(cell));
    const Problem p = make_problem(cell, 2, 5);
    CudaSequenceExecutor gpu(p.spec);
    const Outputs once = run(gpu, p);
    const size_t tb = static_cast<size_t>(p.T) * p.B;
    std::vector<float> dx(tb * p.spec.input), d0(p.state0.size());
    gpu.backward(p.dy, dx, d0);  // the same forward's backward again: ADDED
    const std::vector<float> twice = flatten(gpu.gradients());
    std::vector<float> doubled = once.grads;
    for (auto& g : doubled) g *= 2.0f;
    CHECK(rel_err(twice, doubled) < 1e-6);
    CHECK(rel_err(dx, once.dx) == 0.0);  // the second backward saw the same forward
  }
}

TEST_CASE("make_device_sequence: cuDNN for its cells, the fused kernels for lstm_ln and mingru") {
  if (!recur::test::gpu_or_skip("make_device_sequence")) return;
  CHECK(dynamic_cast<CudnnSequenceExecutor*>(
            make_device_sequence({CellType::kLstm, 3, 4, 1, 0}, {}).get()) != nullptr);
  CHECK(dynamic_cast<CudaSequenceExecutor*>(
            make_device_sequence({CellType::kLstmLn, 3, 4, 1, 0}, {}).get()) != nullptr);
  CHECK(dynamic_cast<CudaSequenceExecutor*>(
            make_device_sequence({CellType::kMinGru, 3, 4, 2, 0}, {}).get()) != nullptr);
  CHECK(dynamic_cast<CudaSequenceExecutor*>(
            make_device_sequence({CellType::kMinGruHighway, 3, 4, 2, 0}, {}).get()) != nullptr);
  CHECK_THROWS_AS(CudaSequenceExecutor({CellType::kGru, 3, 4, 1, 0}), recur::Error);
}

#else

TEST_CASE("cuda sequence executor forward and backward equal the CPU executor") {
  recur::test::skip("cuda sequence executor parity: this build has no CUDA support");
}

#endif
