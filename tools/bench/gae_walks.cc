// GAE on the host, two walks over the same (T, N) rollout side by side: the column walk (one env's
// chain after another: kernels::gae_reference, what the device kernel's threads each run, and how
// agent::compute_gae walked until 2026-11-30) and agent::compute_gae as it runs now (from 8 envs
// on a row walk: the envs' chains side by side, one time step after another). Both give the same
// bits (checked here, and in tests/kernels/gae_test.cc). Also the host async anchor's loop. A
// standalone program, as the figures in docs/PERFORMANCE.md were taken:
//   g++ -O3 -march=native -ffp-contract=off -std=c++20 -I. tools/bench/gae_walks.cc \
//     agent/ppo/gae.cc -lfmt -o /tmp/gae_walks && /tmp/gae_walks
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "agent/ppo/gae.h"
#include "kernels/gae_math.h"
#include "kernels/learner_math.h"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main() {
  std::printf(
      "| T x N | column walk, us | compute_gae, us | column / compute_gae | anchor loop, us |\n");
  std::printf("|---|---:|---:|---:|---:|\n");
  for (const auto& [T, N] : {std::pair{32, 1024}, std::pair{32, 4096}, std::pair{128, 64},
                             std::pair{256, 8}, std::pair{2048, 1}}) {
    const auto tn = static_cast<size_t>(T) * N;
    std::mt19937 gen(1);
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<float> rew(tn), val(tn), boot(tn), last(static_cast<size_t>(N));
    std::vector<uint8_t> term(tn), trunc(tn);
    for (size_t i = 0; i < tn; ++i) {
      rew[i] = u(gen), val[i] = u(gen), boot[i] = u(gen);
      const float e = u(gen);
      term[i] = e > 0.98f, trunc[i] = e < -0.99f;
    }
    for (auto& v : last) v = u(gen);
    std::vector<float> adv_col(tn), ret_col(tn), adv_row(tn), ret_row(tn);
    recur::kernels::GaeInputs in;
    in.rewards = rew.data(), in.values = val.data(), in.terminated = term.data();
    in.truncated = trunc.data(), in.bootstrap_values = boot.data(), in.last_values = last.data();
    // Alternating, best of 300 each: the machine's noise hits both walks alike.
    double col = 1e9, row = 1e9;
    for (int rep = 0; rep < 300; ++rep) {
      auto t0 = std::chrono::steady_clock::now();
      recur::kernels::gae_reference(T, N, 0.999f, 0.98f, in, adv_col.data(), ret_col.data());
      col = std::min(col, seconds_since(t0));
      t0 = std::chrono::steady_clock::now();
      recur::agent::compute_gae(T, N, 0.999f, 0.98f, rew, val, term, trunc, boot, last, adv_row,
                                ret_row);
      row = std::min(row, seconds_since(t0));
    }
    if (std::memcmp(adv_col.data(), adv_row.data(), tn * sizeof(float)) != 0 ||
        std::memcmp(ret_col.data(), ret_row.data(), tn * sizeof(float)) != 0) {
      std::fprintf(stderr, "gae_walks: the two walks differ at T %d, N %d\n", T, N);
      return 1;
    }
    // The host anchor (agent/ppo/updater.cc): one weight per sample, log-probs replaced.
    std::vector<float> lp(tn), prox(tn);
    for (size_t i = 0; i < tn; ++i) lp[i] = u(gen) - 1, prox[i] = lp[i] + 0.1f * u(gen);
    double anchor = 1e9;
    for (int rep = 0; rep < 300; ++rep) {
      std::vector<float> a = adv_row, l = lp;
      const auto t0 = std::chrono::steady_clock::now();
      for (size_t i = 0; i < tn; ++i) {
        a[i] *= recur::kernels::anchor_weight(prox[i], l[i]);
        l[i] = prox[i];
      }
      anchor = std::min(anchor, seconds_since(t0));
      if (a[tn / 2] == 12345.0f) std::puts("");  // keeps the loop
    }
    std::printf("| %d x %d | %.1f | %.1f | %.1fx | %.1f |\n", T, N, col * 1e6, row * 1e6, col / row,
                anchor * 1e6);
  }
  return 0;
}
