// algo.async_anchor's correction (kernels/proximal_anchor.h): the CPU reference against the
// host updater's original formula, min(1, exp(proximal - behaviour)) with std::min and std::exp,
// bit for bit (the updater now calls the same kernels::anchor_weight), touching only the chunk's
// rows; with no rows, every row; the scatter of algo.async_anchor_values writing the chunk's
// rows only; and the kernels against the references (GPU: the device's expf may differ from the
// host's by an ulp or two, so the advantages agree to a relative 1e-6; the rest are copies).
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

TEST_CASE("the proximal anchor without rows weights every row of the rollout") {
  AnchorCase c(4, 6, 5);
  // Every row's proximal log-prob: the chunk's rows scattered, the others their own.
  std::vector<float> prox = c.log_probs;
  for (size_t k = 0; k < c.rows.size(); ++k) prox[static_cast<size_t>(c.rows[k])] = c.proximal[k];
  std::vector<int32_t> identity(prox.size());
  std::iota(identity.begin(), identity.end(), 0);
  std::vector<float> lp = c.log_probs, adv = c.advantages;
  std::vector<float> lp_rows = c.log_probs, adv_rows = c.advantages;
  const int m = static_cast<int>(prox.size());
  recur::kernels::proximal_anchor_reference(nullptr, prox.data(), m, lp.data(), adv.data());
  recur::kernels::proximal_anchor_reference(identity.data(), prox.data(), m, lp_rows.data(),
                                            adv_rows.data());
  CHECK(lp == prox);
  CHECK(lp == lp_rows);
  CHECK(adv == adv_rows);
  CHECK(adv != c.advantages);
}

TEST_CASE("the proximal scatter writes the chunk's rows only, values when given") {
  AnchorCase c(5, 9, 7);
  const int m = static_cast<int>(c.rows.size());
  std::vector<float> values(c.proximal.size());
  for (size_t k = 0; k < values.size(); ++k) values[k] = 0.5f * static_cast<float>(k) - 3.0f;
  const std::vector<float> before_values(c.log_probs.size(), 7.0f);
  std::vector<float> prox_out(c.log_probs.size(), -9.0f), values_out = before_values;
  recur::kernels::proximal_scatter_reference(c.rows.data(), c.proximal.data(), values.data(), m,
                                             prox_out.data(), values_out.data());
  std::vector<uint8_t> in_chunk(prox_out.size(), 0);
  for (int k = 0; k < m; ++k) {
    const auto i = static_cast<size_t>(c.rows[static_cast<size_t>(k)]);
    in_chunk[i] = 1;
    CHECK(prox_out[i] == c.proximal[static_cast<size_t>(k)]);
    CHECK(values_out[i] == values[static_cast<size_t>(k)]);
  }
  for (size_t i = 0; i < prox_out.size(); ++i)
    if (!in_chunk[i]) {
      CHECK(prox_out[i] == -9.0f);
      CHECK(values_out[i] == 7.0f);
    }
  // No values: the log-probs alone.
  std::vector<float> untouched = before_values;
  recur::kernels::proximal_scatter_reference(c.rows.data(), c.proximal.data(), nullptr, m,
                                             prox_out.data(), untouched.data());
  CHECK(untouched == before_values);
}

#ifdef RECUR_WITH_CUDA
namespace {

// The largest elementwise relative difference of `got` from `want` (the device's expf may round
// an ulp or two from the host's).
double worst_relative(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i)
    worst = std::max(
        worst, std::abs(double{got[i]} - want[i]) / std::max(std::abs(double{want[i]}), 1e-30));
  return worst;
}

}  // namespace

TEST_CASE("the proximal scatter kernel and the anchor over every row equal their references") {
  if (!recur::test::gpu_or_skip("proximal scatter kernel")) return;
  using recur::test::to_device;
  using recur::test::to_host;
  for (const auto& [T, N] : {std::pair{1, 1}, std::pair{32, 1024}, std::pair{5, 301}}) {
    CAPTURE(T);
    CAPTURE(N);
    AnchorCase c(T, N, static_cast<uint64_t>(2 * T + N));
    const int m = static_cast<int>(c.rows.size());
    std::vector<float> values(c.proximal.size());
    for (size_t k = 0; k < values.size(); ++k) values[k] = static_cast<float>(k % 13) - 6.0f;
    std::vector<float> prox = c.log_probs, vals(c.log_probs.size(), 1.0f);
    recur::kernels::proximal_scatter_reference(c.rows.data(), c.proximal.data(), values.data(), m,
                                               prox.data(), vals.data());
    auto d_rows = to_device(c.rows);
    auto d_chunk = to_device(c.proximal), d_values = to_device(values);
    auto d_prox = to_device(c.log_probs), d_vals = to_device(std::vector<float>(vals.size(), 1.0f));
    recur::kernels::launch_proximal_scatter(d_rows.data(), d_chunk.data(), d_values.data(), m,
                                            d_prox.data(), d_vals.data(), nullptr);
    CHECK(to_host(d_prox) == prox);
    CHECK(to_host(d_vals) == vals);
    // Then every row anchored at once.
    const int tn = static_cast<int>(prox.size());
    std::vector<float> lp = c.log_probs, adv = c.advantages;
    recur::kernels::proximal_anchor_reference(nullptr, prox.data(), tn, lp.data(), adv.data());
    auto d_lp = to_device(c.log_probs), d_adv = to_device(c.advantages);
    recur::kernels::launch_proximal_anchor(nullptr, d_prox.data(), tn, d_lp.data(), d_adv.data(),
                                           nullptr);
    CHECK(to_host(d_lp) == lp);
    const std::vector<float> got = to_host(d_adv);
    CHECK(worst_relative(got, adv) <= 1e-6);
  }
}

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
    CHECK(worst_relative(got, adv) <= 1e-6);
  }
}
#endif
