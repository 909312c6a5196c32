// The tanh-squashed action heads (policy/squashed_action.h, policy::TanhGaussian and
// policy::TanhDeterministic in policy/distributions.h) against float64 references: log-probs
// from the same draws, modes, the Box always respected, and the sample mean of the normalized
// action against E[tanh(mean + std N)] by quadrature.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "policy/distributions.h"
#include "policy/squashed_action.h"
#include "tests/support/alloc_counter.h"
#include "tests/support/skip.h"
#include "tests/support/temp_dir.h"

using recur::Rng;
using namespace recur::policy;

namespace {

const std::vector<float> kLow = {-2.0f, 0.1f, -0.4f}, kHigh = {2.0f, 0.3f, 1.3f};

// E[f(z)], z ~ N(0, 1), by the trapezoid rule on [-12, 12]: the tails beyond carry < 1e-32 and
// f is bounded; 24,001 nodes put the rule's error far below the Monte Carlo error it judges.
template <typename F>
double gauss_expectation(F f) {
  const int n = 24000;
  const double lo = -12, h = 24.0 / n;
  double sum = 0;
  for (int k = 0; k <= n; ++k) {
    const double z = lo + h * k;
    const double w = (k == 0 || k == n) ? 0.5 : 1.0;
    sum += w * f(z) * std::exp(-0.5 * z * z);
  }
  return sum * h / std::sqrt(2 * std::numbers::pi);
}

// One dimension's log pi term in float64 from the definition (squashed_action.h's comment).
double reference_term(double eps, double raw, double mean, double* a_out) {
  const double log_std = -5.0 + 0.5 * 7.0 * (std::tanh(raw) + 1.0);
  const double a = std::tanh(mean + std::exp(log_std) * eps);
  *a_out = a;
  return -0.5 * eps * eps - log_std - 0.5 * std::log(2 * std::numbers::pi) -
         std::log(1.0 - a * a + 1e-6);
}

}  // namespace

TEST_CASE("squash names round trip and an unknown one lists the allowed") {
  for (Squash s : {Squash::kNone, Squash::kTanhGaussian, Squash::kTanh})
    CHECK(parse_squash(to_string(s)) == s);
  const std::string e = recur::test::error_of([] { parse_squash("softsign"); });
  CHECK(e.find("'softsign'") != std::string::npos);
  CHECK(e.find("none, tanh_gaussian, tanh") != std::string::npos);
  CHECK(squash_head_width(Squash::kTanhGaussian, 3) == 6);
  CHECK(squash_head_width(Squash::kTanh, 3) == 3);
}

TEST_CASE("TanhGaussian log-probs and actions match a float64 computation from the same draws") {
  const int batch = 400, d = 3;
  Rng init(1);
  std::vector<float> head(static_cast<size_t>(batch) * 2 * d);
  for (int i = 0; i < batch; ++i)
    for (int j = 0; j < 2 * d; ++j)  // means in [-2, 2], raw log-stds in [-2, 1]
      head[static_cast<size_t>(i * 2 * d + j)] =
          static_cast<float>(j < d ? init.uniform(-2, 2) : init.uniform(-2, 1));
  const TanhGaussian dist(batch, d, head, kLow, kHigh);
  std::vector<float> actions(static_cast<size_t>(batch) * d), logp(batch);
  for (const bool sampled : {true, false}) {
    CAPTURE(sampled);
    Rng rng(9), replay(9);
    sampled ? dist.sample(rng, actions, logp) : dist.mode(actions, logp);
    for (int i = 0; i < batch; ++i) {
      double ref = 0, bound = 0;
      for (int j = 0; j < d; ++j) {
        const auto k = static_cast<size_t>(i * 2 * d + j);
        const double eps = sampled ? replay.normal() : 0.0;  // the same draws, row-major
        double a = 0;
        ref += reference_term(eps, head[k + d], head[k], &a);
        // float32 leaves log(1 - a^2 + 1e-6) an absolute error of ~ulp(a) 2|a| / (1 - a^2 +
        // 1e-6), which grows as tanh saturates; the other terms are O(1) with ulp-sized errors.
        bound += 4 * 0x1p-24 * (2 * std::abs(a) / (1 - a * a + 1e-6) + 4 + eps * eps);
        const double x = kLow[j] + 0.5 * (a + 1) * (kHigh[j] - kLow[j]);
        const float got = actions[static_cast<size_t>(i * d + j)];
        CHECK(std::abs(got - x) <= 4e-7 * (kHigh[j] - kLow[j]) + 1e-7 * std::abs(x));
        CHECK(got >= kLow[j]);
        CHECK(got <= kHigh[j]);
      }
      CHECK(std::abs(logp[static_cast<size_t>(i)] - ref) <= bound);
    }
  }
  // log_probs may be left out; wrong sizes are refused.
  Rng rng(3);
  dist.sample(rng, actions, {});
  CHECK_THROWS_AS(dist.mode(std::span(actions).first(3), logp), std::invalid_argument);
  CHECK_THROWS_AS(TanhGaussian(batch, d, std::span(head).first(batch * d), kLow, kHigh),
                  std::invalid_argument);
  CHECK_THROWS_AS(TanhGaussian(batch, d, head, std::span(kLow).first(2), kHigh),
                  std::invalid_argument);
}

TEST_CASE("TanhGaussian mode is tanh(mean) in the Box and saturated samples stay inside it") {
  const int d = 3;
  // Means far out and the largest log-std: tanh rounds to +-1 in float32 for most draws.
  const std::vector<float> head = {25.0f,  -30.0f, 0.0f, 10.0f, 10.0f, 10.0f,
                                   -25.0f, 30.0f,  0.5f, 10.0f, 10.0f, -10.0f};
  const TanhGaussian dist(2, d, head, kLow, kHigh);
  std::vector<float> a(2 * d), logp(2);
  dist.mode(a, logp);
  for (int k = 0; k < 2 * d; ++k) {
    const auto j = static_cast<size_t>(k % d);
    const float mean = head[static_cast<size_t>(k / d * 2 * d) + j];
    CHECK(a[static_cast<size_t>(k)] ==
          std::clamp(to_env_action(std::tanh(mean), kLow[j], kHigh[j]), kLow[j], kHigh[j]));
  }
  CHECK(a[0] == 2.0f);  // tanh(25) = 1 in float32: the Box's high exactly
  CHECK(a[3] == -2.0f);
  CHECK(std::isfinite(logp[0]));
  Rng rng(4);
  int at_bound = 0;
  for (int t = 0; t < 2000; ++t) {
    dist.sample(rng, a, logp);
    for (int k = 0; k < 2 * d; ++k) {
      const auto j = static_cast<size_t>(k % d);
      REQUIRE(a[static_cast<size_t>(k)] >= kLow[j]);
      REQUIRE(a[static_cast<size_t>(k)] <= kHigh[j]);
      at_bound += a[static_cast<size_t>(k)] == kLow[j] || a[static_cast<size_t>(k)] == kHigh[j];
    }
    REQUIRE(std::isfinite(logp[0]));
    REQUIRE(std::isfinite(logp[1]));
  }
  CHECK(at_bound > 2000);  // the clamped case was exercised
}

TEST_CASE("TanhGaussian samples have the moments of tanh(mean + std N) (quadrature)") {
  // Two dimensions: a wide Gaussian (std 2.28) where E[tanh(u)] is far from tanh(mean), and a
  // narrow one (std 0.22).
  const int batch = 100000, d = 2;
  const std::vector<float> row = {0.7f, -0.3f, 0.8f, 0.0f};  // [mean (2), raw (2)]
  std::vector<float> head;
  for (int i = 0; i < batch; ++i) head.insert(head.end(), row.begin(), row.end());
  const std::vector<float> low = {-1.0f, 0.0f}, high = {3.0f, 10.0f};
  const TanhGaussian dist(batch, d, head, low, high);
  std::vector<float> actions(static_cast<size_t>(batch) * d);
  Rng rng(5);
  dist.sample(rng, actions, {});
  normalize_actions(actions, low, high, actions);  // in place
  for (int j = 0; j < d; ++j) {
    CAPTURE(j);
    // First and second moments (the second one pins the std: 5% off fails it).
    double sum[2] = {0, 0}, sum_sq[2] = {0, 0};
    for (int i = 0; i < batch; ++i) {
      const double a = actions[static_cast<size_t>(i * d + j)];
      for (int p = 0; p < 2; ++p) {
        const double v = p == 0 ? a : a * a;
        sum[p] += v;
        sum_sq[p] += v * v;
      }
    }
    const double mu = row[static_cast<size_t>(j)];
    const double sigma =
        std::exp(static_cast<double>(squash_log_std(row[static_cast<size_t>(j + d)])));
    for (int p = 0; p < 2; ++p) {
      CAPTURE(p);
      const double m = sum[p] / batch, se = std::sqrt((sum_sq[p] / batch - m * m) / batch);
      const double expected = gauss_expectation([&](double z) {
        const double a = std::tanh(mu + sigma * z);
        return p == 0 ? a : a * a;
      });
      // 5 standard errors (plus the float32 round trip through env units, ~1e-6).
      CHECK(std::abs(m - expected) < 5 * se + 1e-6);
      if (j == 0 && p == 0) CHECK(std::abs(std::tanh(mu) - expected) > 50 * se);
    }
  }
}

TEST_CASE("TanhDeterministic: mode is tanh(mean), noise is clamped into the Box") {
  const int batch = 50000, d = 3;
  const std::vector<float> row = {0.5f, -4.0f, 1.2f};
  std::vector<float> mean;
  for (int i = 0; i < batch; ++i) mean.insert(mean.end(), row.begin(), row.end());
  const float noise = 0.3f;
  const TanhDeterministic dist(batch, d, mean, kLow, kHigh, noise);
  std::vector<float> a(mean.size());
  dist.mode(a);
  for (int j = 0; j < d; ++j)
    CHECK(a[static_cast<size_t>(j)] ==
          std::clamp(to_env_action(std::tanh(row[static_cast<size_t>(j)]), kLow[j], kHigh[j]),
                     kLow[j], kHigh[j]));
  Rng rng(6);
  dist.sample(rng, a);
  normalize_actions(a, kLow, kHigh, a);
  for (int j = 0; j < d; ++j) {
    CAPTURE(j);
    double sum = 0, sum_sq = 0;
    int at_bound = 0;
    for (int i = 0; i < batch; ++i) {
      const double v = a[static_cast<size_t>(i * d + j)];
      REQUIRE(v >= -1.0 - 1e-6);
      REQUIRE(v <= 1.0 + 1e-6);
      at_bound += std::abs(std::abs(v) - 1.0) < 1e-6;
      sum += v;
      sum_sq += v * v;
    }
    const double m = sum / batch, sd = std::sqrt(sum_sq / batch - m * m);
    const double t = std::tanh(static_cast<double>(row[static_cast<size_t>(j)]));
    const double expected =
        gauss_expectation([&](double z) { return std::clamp(t + noise * z, -1.0, 1.0); });
    CHECK(std::abs(m - expected) < 5 * sd / std::sqrt(batch) + 1e-6);
    // tanh(-4) = -0.9993: about half the draws land past -1 and are clamped onto the bound.
    if (j == 1) CHECK(at_bound > batch / 3);
  }
}

TEST_CASE("normalize_actions inverts the map to the Box") {
  const std::vector<float> a = {-1.0f, 0.0f, 1.0f, 0.25f, -0.5f, 0.75f};
  std::vector<float> env(a.size()), back(a.size());
  for (size_t k = 0; k < a.size(); ++k) env[k] = to_env_action(a[k], kLow[k % 3], kHigh[k % 3]);
  normalize_actions(env, kLow, kHigh, back);
  for (size_t k = 0; k < a.size(); ++k) CHECK(back[k] == doctest::Approx(a[k]).epsilon(1e-6));
  CHECK_THROWS_AS(normalize_actions(std::span(env).first(4), kLow, kHigh, std::span(back).first(4)),
                  std::invalid_argument);
}

TEST_CASE("squashed heads do not allocate") {
  if (!recur::test::AllocationCounter::available()) {
    recur::test::skip("allocation counting is off in sanitizer builds");
    return;
  }
  const int batch = 64, d = 3;
  std::vector<float> head(static_cast<size_t>(batch) * 2 * d, 0.3f),
      actions(static_cast<size_t>(batch) * d), logp(batch);
  Rng rng(7);
  size_t allocations = 0;
  {
    recur::test::AllocationCounter counter;
    const TanhGaussian g(batch, d, head, kLow, kHigh);
    g.sample(rng, actions, logp);
    g.mode(actions, logp);
    const TanhDeterministic t(batch, d, std::span(head).first(actions.size()), kLow, kHigh, 0.1f);
    t.sample(rng, actions);
    t.mode(actions);
    normalize_actions(actions, kLow, kHigh, actions);
    allocations = counter.count();
  }
  CHECK(allocations == 0);
}
