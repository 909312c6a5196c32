#include "policy/distributions.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <vector>

#include "tests/support/alloc_counter.h"
#include "tests/support/skip.h"

using recur::Rng;
using recur::policy::Categorical;
using recur::policy::DiagGaussian;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<float> random_floats(size_t size, Rng& rng, double low, double high) {
  std::vector<float> v(size);
  for (auto& x : v) x = static_cast<float>(rng.uniform(low, high));
  return v;
}

// Categorical in float64 from the definition: log p_j = z_j - log sum_k exp z_k.
std::vector<double> reference_log_softmax(const std::vector<double>& z) {
  double max = -kInf;
  for (const double v : z) max = std::max(max, v);
  double sum = 0;
  for (const double v : z) sum += std::exp(v - max);
  std::vector<double> out(z.size());
  for (size_t j = 0; j < z.size(); ++j) out[j] = z[j] - max - std::log(sum);
  return out;
}

double reference_entropy(const std::vector<double>& z) {
  double h = 0;
  for (const double lp : reference_log_softmax(z)) h -= std::exp(lp) * lp;
  return h;
}

// sum_i d_logp[i] log p(a_i) + d_entropy[i] H_i: the scalar whose logit gradient backward gives.
double categorical_loss(const std::vector<double>& logits, int n, const std::vector<float>& actions,
                        const std::vector<float>& d_logp, const std::vector<float>& d_entropy) {
  double loss = 0;
  for (size_t i = 0; i < actions.size(); ++i) {
    const std::vector<double> z(logits.begin() + static_cast<ptrdiff_t>(i) * n,
                                logits.begin() + static_cast<ptrdiff_t>(i + 1) * n);
    loss += d_logp[i] * reference_log_softmax(z)[static_cast<size_t>(actions[i])];
    loss += d_entropy[i] * reference_entropy(z);
  }
  return loss;
}

double gaussian_loss(const std::vector<double>& mean, const std::vector<double>& log_std, int d,
                     const std::vector<float>& actions, const std::vector<float>& d_logp,
                     const std::vector<float>& d_entropy) {
  double loss = 0;
  for (size_t i = 0; i < d_logp.size(); ++i)
    for (size_t j = 0; j < static_cast<size_t>(d); ++j) {
      const size_t k = i * static_cast<size_t>(d) + j;
      const double z = (actions[k] - mean[k]) / std::exp(log_std[j]);
      const double log_p = -0.5 * z * z - log_std[j] - 0.5 * std::log(2 * std::numbers::pi);
      const double h = 0.5 + 0.5 * std::log(2 * std::numbers::pi) + log_std[j];
      loss += d_logp[i] * log_p + d_entropy[i] * h;
    }
  return loss;
}

// Central differences in float64 with h = 1e-6: truncation ~h^2 and rounding ~1e-16 / h, both far
// below the float32 rounding of the analytic gradient (~1e-6 for O(1) values). The tolerance
// 1e-5 abs + 1e-5 rel is ten times that and far below a wrong term (O(0.1)).
template <class Loss>
void check_gradient(std::vector<double> at, std::span<const float> analytic, Loss loss) {
  REQUIRE(at.size() == analytic.size());
  const double h = 1e-6;
  for (size_t k = 0; k < at.size(); ++k) {
    const double saved = at[k];
    at[k] = saved + h;
    const double up = loss(at);
    at[k] = saved - h;
    const double down = loss(at);
    at[k] = saved;
    const double fd = (up - down) / (2 * h);
    CAPTURE(k);
    CHECK(std::abs(analytic[k] - fd) <= 1e-5 + 1e-5 * std::abs(fd));
  }
}

}  // namespace

TEST_CASE("Categorical log_prob and entropy match a float64 reference") {
  Rng rng(1);
  const int batch = 7, n = 5;
  const auto logits = random_floats(batch * n, rng, -4, 4);
  std::vector<float> actions(batch), log_p(batch), h(batch);
  for (auto& a : actions) a = static_cast<float>(rng.uniform_int(n));
  const Categorical dist(batch, n, logits);
  dist.log_prob(actions, log_p);
  dist.entropy(h);
  for (int i = 0; i < batch; ++i) {
    const std::vector<double> z(logits.begin() + i * n, logits.begin() + (i + 1) * n);
    const auto ref = reference_log_softmax(z);
    // float32 log-sum-exp of 5 terms: errors of a few float32 ulps of O(1) values.
    CHECK(log_p[static_cast<size_t>(i)] ==
          doctest::Approx(ref[static_cast<size_t>(actions[static_cast<size_t>(i)])]).epsilon(1e-5));
    CHECK(h[static_cast<size_t>(i)] == doctest::Approx(reference_entropy(z)).epsilon(1e-5));
  }
}

TEST_CASE("Categorical backward matches float64 central differences") {
  Rng rng(2);
  const int batch = 6, n = 4;
  const auto logits = random_floats(batch * n, rng, -3, 3);
  std::vector<float> actions(batch);
  for (auto& a : actions) a = static_cast<float>(rng.uniform_int(n));
  const auto d_logp = random_floats(batch, rng, -1, 1);
  const auto d_entropy = random_floats(batch, rng, -1, 1);
  std::vector<float> d_logits(logits.size());
  const Categorical dist(batch, n, logits);
  const std::vector<double> at(logits.begin(), logits.end());

  SUBCASE("both terms") {
    dist.backward(actions, d_logp, d_entropy, d_logits);
    check_gradient(at, d_logits, [&](const std::vector<double>& z) {
      return categorical_loss(z, n, actions, d_logp, d_entropy);
    });
  }
  SUBCASE("log_prob only") {
    dist.backward(actions, d_logp, {}, d_logits);
    const std::vector<float> zero(batch, 0.0f);
    check_gradient(at, d_logits, [&](const std::vector<double>& z) {
      return categorical_loss(z, n, actions, d_logp, zero);
    });
  }
  SUBCASE("entropy only") {
    dist.backward({}, {}, d_entropy, d_logits);
    const std::vector<float> zero(batch, 0.0f);
    check_gradient(at, d_logits, [&](const std::vector<double>& z) {
      return categorical_loss(z, n, actions, zero, d_entropy);
    });
  }
}

TEST_CASE("Categorical entropy of uniform logits is log n") {
  for (const int n : {1, 2, 3, 7, 100}) {
    const std::vector<float> logits(static_cast<size_t>(2 * n), 0.37f);
    std::vector<float> h(2);
    Categorical(2, n, logits).entropy(h);
    CHECK(h[0] == doctest::Approx(std::log(n)).epsilon(1e-6).scale(1.0));
    CHECK(h[1] == h[0]);
  }
}

TEST_CASE("Categorical stays finite for huge logits and respects -inf masks") {
  const float inf = std::numeric_limits<float>::infinity();
  // Row 0: logits of magnitude 1e30 (naive exp overflows); row 1: action 1 masked out.
  const std::vector<float> logits = {1e30f, -1e30f, 0.0f, 2.0f, -inf, 1.0f};
  const Categorical dist(2, 3, logits);
  std::vector<float> log_p(2), h(2), d_logits(6), modes(2);
  dist.log_prob(std::vector<float>{0, 2}, log_p);
  dist.entropy(h);
  dist.backward(std::vector<float>{0, 2}, std::vector<float>{1, 1}, std::vector<float>{1, 1},
                d_logits);
  for (const float v : log_p) CHECK(std::isfinite(v));
  for (const float v : h) CHECK(std::isfinite(v));
  for (const float v : d_logits) CHECK(std::isfinite(v));
  CHECK(log_p[0] == 0.0f);
  CHECK(h[0] == 0.0f);
  CHECK(d_logits[4] == 0.0f);  // no gradient into a masked logit
  // Row 1 is Categorical over {2, 1} with the middle action impossible.
  CHECK(h[1] == doctest::Approx(reference_entropy({2.0, 1.0})).epsilon(1e-6));
  dist.mode(modes);
  CHECK(modes == std::vector<float>{0, 0});
  Rng rng(3);
  std::vector<float> samples(2);
  for (int t = 0; t < 2000; ++t) {
    dist.sample(rng, samples);
    CHECK(samples[0] == 0.0f);
    CHECK(samples[1] != 1.0f);
  }
  const std::vector<float> all_masked = {-inf, -inf};
  std::vector<float> one(1);
  CHECK_THROWS_AS(Categorical(1, 2, all_masked).entropy(one), std::invalid_argument);
}

TEST_CASE("Categorical samples follow the probabilities") {
  // The same logits in every row: frequencies over 40000 draws within 5 binomial sigmas.
  const int batch = 40000, n = 4;
  const std::vector<double> z = {0.5, -1.0, 2.0, 0.0};
  std::vector<float> logits;
  for (int i = 0; i < batch; ++i) logits.insert(logits.end(), z.begin(), z.end());
  std::vector<float> actions(batch);
  Rng rng(4);
  Categorical(batch, n, logits).sample(rng, actions);
  std::vector<int> counts(n, 0);
  for (const float a : actions) ++counts[static_cast<size_t>(a)];
  const auto ref = reference_log_softmax(z);
  for (size_t j = 0; j < n; ++j) {
    const double p = std::exp(ref[j]);
    const double sigma = std::sqrt(p * (1 - p) / batch);
    CHECK(std::abs(counts[j] / static_cast<double>(batch) - p) < 5 * sigma);
  }
}

TEST_CASE("Categorical mode is the first argmax and bad actions are rejected") {
  const std::vector<float> logits = {1, 3, 3, 0, -2, -1, -5, -1};
  std::vector<float> modes(2), out(2);
  const Categorical dist(2, 4, logits);
  dist.mode(modes);
  CHECK(modes == std::vector<float>{1, 1});
  CHECK_THROWS_AS(dist.log_prob(std::vector<float>{4, 0}, out), std::invalid_argument);
  CHECK_THROWS_AS(dist.log_prob(std::vector<float>{0.5f, 0}, out), std::invalid_argument);
  CHECK_THROWS_AS(dist.log_prob(std::vector<float>{-1, 0}, out), std::invalid_argument);
  CHECK_THROWS_AS(Categorical(2, 3, logits), std::invalid_argument);
}

TEST_CASE("DiagGaussian log_prob and entropy match a float64 reference") {
  Rng rng(5);
  const int batch = 5, d = 3;
  const auto mean = random_floats(batch * d, rng, -2, 2);
  const auto log_std = random_floats(d, rng, -1.5, 0.5);
  const auto actions = random_floats(batch * d, rng, -3, 3);
  std::vector<float> log_p(batch), h(batch);
  const DiagGaussian dist(batch, d, mean, log_std);
  dist.log_prob(actions, log_p);
  dist.entropy(h);
  const std::vector<double> md(mean.begin(), mean.end()), ld(log_std.begin(), log_std.end());
  for (int i = 0; i < batch; ++i) {
    std::vector<float> one_hot(batch, 0.0f), zero(batch, 0.0f);
    one_hot[static_cast<size_t>(i)] = 1.0f;
    // Sums of 3 float32 terms of size up to ~20 (z^2 / 2 with sigma = e^-1.5).
    CHECK(log_p[static_cast<size_t>(i)] ==
          doctest::Approx(gaussian_loss(md, ld, d, actions, one_hot, zero)).epsilon(1e-5));
    CHECK(h[static_cast<size_t>(i)] ==
          doctest::Approx(gaussian_loss(md, ld, d, actions, zero, one_hot)).epsilon(1e-5));
  }
}

TEST_CASE("DiagGaussian backward matches float64 central differences") {
  Rng rng(6);
  const int batch = 6, d = 3;
  const auto mean = random_floats(batch * d, rng, -1, 1);
  const auto log_std = random_floats(d, rng, -0.7, 0.3);
  const auto actions = random_floats(batch * d, rng, -2, 2);
  const auto d_logp = random_floats(batch, rng, -1, 1);
  const auto d_entropy = random_floats(batch, rng, -1, 1);
  const DiagGaussian dist(batch, d, mean, log_std);
  std::vector<float> d_mean(mean.size());
  std::vector<float> d_log_std(d, 0.25f);  // added to, not overwritten
  dist.backward(actions, d_logp, d_entropy, d_mean, d_log_std);
  for (auto& g : d_log_std) g -= 0.25f;
  const std::vector<double> md(mean.begin(), mean.end()), ld(log_std.begin(), log_std.end());
  check_gradient(md, d_mean, [&](const std::vector<double>& m) {
    return gaussian_loss(m, ld, d, actions, d_logp, d_entropy);
  });
  check_gradient(ld, d_log_std, [&](const std::vector<double>& l) {
    return gaussian_loss(md, l, d, actions, d_logp, d_entropy);
  });
}

TEST_CASE("DiagGaussian samples have the mean and standard deviation") {
  const int batch = 20000, d = 2;
  const std::vector<float> mu = {1.5f, -0.5f}, log_std = {std::log(0.3f), std::log(2.0f)};
  std::vector<float> mean;
  for (int i = 0; i < batch; ++i) mean.insert(mean.end(), mu.begin(), mu.end());
  std::vector<float> samples(mean.size()), modes(mean.size());
  Rng rng(7);
  const DiagGaussian dist(batch, d, mean, log_std);
  dist.sample(rng, samples);
  for (size_t j = 0; j < d; ++j) {
    double sum = 0, sum_sq = 0;
    for (int i = 0; i < batch; ++i) {
      const double a = samples[static_cast<size_t>(i * d) + j];
      sum += a;
      sum_sq += a * a;
    }
    const double m = sum / batch, var = sum_sq / batch - m * m;
    const double sigma = std::exp(static_cast<double>(log_std[j]));
    // Standard errors: sigma / sqrt(N) for the mean, sigma^2 sqrt(2 / N) for the variance.
    CHECK(std::abs(m - mu[j]) < 5 * sigma / std::sqrt(batch));
    CHECK(std::abs(var - sigma * sigma) < 5 * sigma * sigma * std::sqrt(2.0 / batch));
  }
  dist.mode(modes);
  CHECK(modes == mean);
}

TEST_CASE("Distributions do not allocate") {
  if (!recur::test::AllocationCounter::available()) {
    recur::test::skip("allocation counting is off in sanitizer builds");
    return;
  }
  Rng rng(8);
  const int batch = 64, n = 6;
  const auto logits = random_floats(batch * n, rng, -2, 2);
  const auto log_std = random_floats(n, rng, -1, 0);
  std::vector<float> actions(batch * n), out(batch), grads(batch * n), d_log_std(n);
  const auto ones = std::vector<float>(batch, 1.0f);
  size_t allocations = 0;
  {
    recur::test::AllocationCounter counter;
    const Categorical c(batch, n, logits);
    const auto a = std::span(actions).first(batch);
    c.sample(rng, a);
    c.mode(a);
    c.log_prob(a, out);
    c.entropy(out);
    c.backward(a, ones, ones, grads);
    const DiagGaussian g(batch, n, logits, log_std);
    g.sample(rng, actions);
    g.mode(actions);
    g.log_prob(actions, out);
    g.entropy(out);
    g.backward(actions, ones, ones, grads, d_log_std);
    allocations = counter.count();
  }
  CHECK(allocations == 0);
}
