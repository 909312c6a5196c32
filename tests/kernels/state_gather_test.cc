// The initial-state gather (kernels/state_gather_math.h, kernels/state_gather.h) against the
// host copies it replaces in the CUDA learner: agent/ppo/cuda_engine.cc's per-minibatch copy of
// the envs' stored states, CudaPolicyLearner::evaluate's per-tower split and
// CudnnSequenceExecutor::stage_forward's (L, N, H) assembly per sub-sequence
// (policy/sequence_plan.h). The reference, given the composed index rows[n] = envs[initial_row[n]]
// and a table pointer offset to the tower's part, must equal that chain exactly; the kernel (a
// pure copy) must equal the reference bit for bit. The GPU case skips (with a message) without a
// usable GPU.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "core/rng.h"
#include "kernels/state_gather_math.h"
#include "policy/sequence_plan.h"

#ifdef RECUR_WITH_CUDA
#include "kernels/cuda_memory.h"
#include "kernels/state_gather.h"
#include "tests/support/device_copy.h"
#include "tests/support/gpu_skip.h"
#endif

namespace {

struct Case {
  int T = 16, N_env = 24, B = 10, L = 2, H = 5;
  bool lstm = true;
  size_t cs = 0, S = 0;      // one core's state, the whole (two-tower) state
  std::vector<float> table;  // (N_env, S)
  std::vector<int> envs;     // (B)
  recur::policy::SequencePlan plan;

  Case(uint64_t seed, bool with_cell) : lstm(with_cell) {
    recur::Rng rng(seed);
    cs = static_cast<size_t>(lstm ? 2 * L : L) * H;
    S = 2 * cs;
    table.resize(static_cast<size_t>(N_env) * S);
    for (auto& x : table) x = static_cast<float>(rng.uniform(-1, 1));
    std::vector<int> all(static_cast<size_t>(N_env));
    std::iota(all.begin(), all.end(), 0);
    for (int i = N_env - 1; i > 0; --i)
      std::swap(all[static_cast<size_t>(i)], all[rng.uniform_int(static_cast<uint64_t>(i + 1))]);
    envs.assign(all.begin(), all.begin() + B);
    std::vector<uint8_t> starts(static_cast<size_t>(T) * B);
    for (auto& s : starts) s = rng.uniform() < 0.1 ? 1 : 0;
    plan = recur::policy::plan_sequences(T, B, starts);
  }

  // rows[n] = the table row that starts sub-sequence n (-1: zeros).
  std::vector<int32_t> rows() const {
    std::vector<int32_t> r(static_cast<size_t>(plan.count));
    for (int n = 0; n < plan.count; ++n) {
      const int32_t b = plan.initial_row[static_cast<size_t>(n)];
      r[static_cast<size_t>(n)] = b >= 0 ? envs[static_cast<size_t>(b)] : -1;
    }
    return r;
  }

  // The host chain of today: env gather, tower split, (L, N, H) assembly.
  void host_chain(int tower, std::vector<float>& hx, std::vector<float>& cx) const {
    const int N = plan.count;
    std::vector<float> state0(static_cast<size_t>(B) * S), t0(static_cast<size_t>(B) * cs);
    for (int j = 0; j < B; ++j)
      std::copy_n(table.begin() + static_cast<ptrdiff_t>(envs[static_cast<size_t>(j)] * S), S,
                  state0.begin() + static_cast<ptrdiff_t>(j * S));
    for (int b = 0; b < B; ++b)
      std::copy_n(state0.begin() + static_cast<ptrdiff_t>(b * S + tower * cs), cs,
                  t0.begin() + static_cast<ptrdiff_t>(b * cs));
    const size_t lnh = static_cast<size_t>(L) * N * H;
    hx.assign(lnh, -7);
    cx.assign(lnh, -7);
    for (int k = 0; k < L; ++k)
      for (int n = 0; n < N; ++n) {
        const int32_t b = plan.initial_row[static_cast<size_t>(n)];
        const size_t dst = (static_cast<size_t>(k) * N + n) * H;
        const float* src = b >= 0 ? t0.data() + static_cast<size_t>(b) * cs : nullptr;
        for (int j = 0; j < H; ++j) {
          hx[dst + j] = src ? src[k * H + j] : 0.0f;
          if (lstm) cx[dst + j] = src ? src[(L + k) * H + j] : 0.0f;
        }
      }
  }
};

}  // namespace

TEST_CASE("initial-state gather reference equals the host copies it replaces") {
  for (const bool lstm : {true, false}) {
    for (const uint64_t seed : {1u, 2u, 3u}) {
      const Case c(seed, lstm);
      REQUIRE(c.plan.count > c.B);  // some sub-sequences start an episode (zeros)
      const std::vector<int32_t> rows = c.rows();
      const size_t lnh = static_cast<size_t>(c.L) * c.plan.count * c.H;
      for (int tower = 0; tower < 2; ++tower) {
        CAPTURE(lstm);
        CAPTURE(seed);
        CAPTURE(tower);
        std::vector<float> want_h, want_c, hx(lnh, -9), cx(lnh, -9);
        c.host_chain(tower, want_h, want_c);
        recur::kernels::gather_initial_states_reference(c.table.data() + tower * c.cs, c.S,
                                                        rows.data(), c.plan.count, c.L, c.H,
                                                        hx.data(), lstm ? cx.data() : nullptr);
        CHECK(hx == want_h);
        if (lstm) CHECK(cx == want_c);
      }
    }
  }
}

#ifdef RECUR_WITH_CUDA
TEST_CASE("initial-state gather kernel equals the CPU reference") {
  if (!recur::test::gpu_or_skip("initial-state gather kernel")) return;
  for (const bool lstm : {true, false}) {
    const Case c(11, lstm);
    const std::vector<int32_t> rows = c.rows();
    const size_t lnh = static_cast<size_t>(c.L) * c.plan.count * c.H;
    auto table = recur::test::to_device(c.table);
    auto d_rows = recur::test::to_device(rows);
    for (int tower = 0; tower < 2; ++tower) {
      std::vector<float> hx(lnh), cx(lnh);
      recur::kernels::gather_initial_states_reference(c.table.data() + tower * c.cs, c.S,
                                                      rows.data(), c.plan.count, c.L, c.H,
                                                      hx.data(), lstm ? cx.data() : nullptr);
      recur::kernels::DeviceBuffer<float> d_hx(lnh), d_cx(lnh);
      recur::kernels::launch_gather_initial_states(table.data() + tower * c.cs, c.S, d_rows.data(),
                                                   c.plan.count, c.L, c.H, d_hx.data(),
                                                   lstm ? d_cx.data() : nullptr, nullptr);
      CHECK(recur::test::to_host(d_hx) == hx);
      if (lstm) CHECK(recur::test::to_host(d_cx) == cx);
    }
  }
}
#endif
