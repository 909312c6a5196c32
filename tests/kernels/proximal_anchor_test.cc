// algo.async_anchor's correction (kernels/proximal_anchor.h): the CPU reference against the
// host updater's original formula, min(1, exp(proximal - behaviour)) with std::min and std::exp,
// bit for bit (the updater now calls the same kernels::anchor_weight), touching only the chunk's
// rows; and the kernel against the reference (GPU: the device's expf may differ from the host's
// by an ulp or two, so the advantages agree to a relative 1e-6; the log-probs are copies).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "core/rng.h"
#include "kernels/proximal_anchor.h"

#ifdef RECUR_WITH_CUDA
#include "tests/support/device_copy.h"
#include "tests/support/gpu_skip.h"
#endif

namespace {

struct AnchorCase {
  std::vector<float> log_probs, advantages, proximal;
  std::vector<int32_t> rows;  // a chunk's rows: every third env column of a (T, N) rollout

  AnchorCase(int T, int N, uint64_t seed) {
    recur::Rng rng(seed);
    const auto tn = static_cast<size_t>(T) * N;
    for (size_t i = 0; i < tn; ++i) {
      log_probs.push_back(static_cast<float>(rng.uniform(-3, 0)));
      advantages.push_back(static_cast<float>(rng.uniform(-2, 2)));
    }
    for (int t = 0; t < T; ++t)
      for (int n = 0; n < N; n += 3) rows.push_back(t * N + n);
    // Proximal log-probs on both sides of the behaviour ones: weights below and at 1.
    for (const int32_t i : rows)
      proximal.push_back(log_probs[static_cast<size_t>(i)] +
                         static_cast<float>(rng.uniform(-0.5, 0.5)));
  }
};

}  // namespace

TEST_CASE("the proximal anchor's reference is the updater's formula on the chunk's rows only") {
  AnchorCase c(7, 10, 3);
  std::vector<float> lp = c.log_probs, adv = c.advantages;
  const int m = static_cast<int>(c.rows.size());
  recur::kernels::proximal_anchor_reference(c.rows.data(), c.proximal.data(), m, lp.data(),
                                            adv.data());
  int below_one = 0;
  std::vector<uint8_t> in_chunk(lp.size(), 0);
  for (int k = 0; k < m; ++k) {
    const auto i = static_cast<size_t>(c.rows[static_cast<size_t>(k)]);
    in_chunk[i] = 1;
    const float w = std::min(1.0f, std::exp(c.proximal[static_cast<size_t>(k)] - c.log_probs[i]));
    below_one += w < 1.0f ? 1 : 0;
    CHECK(adv[i] == c.advantages[i] * w);
    CHECK(lp[i] == c.proximal[static_cast<size_t>(k)]);
  }
  CHECK(below_one > m / 4);  // the case has weights below 1 ...
  CHECK(below_one < m);      // ... and clipped at 1
  for (size_t i = 0; i < lp.size(); ++i)
    if (!in_chunk[i]) {
      CHECK(lp[i] == c.log_probs[i]);
      CHECK(adv[i] == c.advantages[i]);
    }
}

#ifdef RECUR_WITH_CUDA
TEST_CASE("the proximal anchor kernel equals its CPU reference") {
  if (!recur::test::gpu_or_skip("proximal anchor kernel")) return;
  using recur::test::to_device;
  using recur::test::to_host;
  for (const auto& [T, N] : {std::pair{1, 1}, std::pair{32, 1024}, std::pair{5, 301}}) {
    CAPTURE(T);
    CAPTURE(N);
    AnchorCase c(T, N, static_cast<uint64_t>(T + N));
    std::vector<float> lp = c.log_probs, adv = c.advantages;
    const int m = static_cast<int>(c.rows.size());
    recur::kernels::proximal_anchor_reference(c.rows.data(), c.proximal.data(), m, lp.data(),
                                              adv.data());
    auto d_rows = to_device(c.rows);
    auto d_prox = to_device(c.proximal);
    auto d_lp = to_device(c.log_probs), d_adv = to_device(c.advantages);
    recur::kernels::launch_proximal_anchor(d_rows.data(), d_prox.data(), m, d_lp.data(),
                                           d_adv.data(), nullptr);
    CHECK(to_host(d_lp) == lp);
    const std::vector<float> got = to_host(d_adv);
    double worst = 0;
    for (size_t i = 0; i < adv.size(); ++i)
      worst = std::max(
          worst, std::abs(double{got[i]} - adv[i]) / std::max(std::abs(double{adv[i]}), 1e-30));
    CHECK(worst <= 1e-6);
  }
}
#endif
