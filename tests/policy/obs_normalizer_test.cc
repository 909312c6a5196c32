#include "policy/obs_normalizer.h"

#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "tests/support/alloc_counter.h"
#include "tests/support/skip.h"

using recur::Rng;
using recur::policy::ObsNormalizer;
using recur::policy::ObsNormalizerConfig;
using recur::policy::TensorMap;

namespace {

// Features on very different scales and offsets, as observations are.
std::vector<float> observations(int rows, int dim, Rng& rng) {
  std::vector<float> v(static_cast<size_t>(rows * dim));
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < dim; ++j)
      v[static_cast<size_t>(i * dim + j)] =
          static_cast<float>(100.0 * j + std::pow(10.0, j - 1) * rng.normal());
  return v;
}

// Feeds `data` in batches of the given row counts.
void feed(ObsNormalizer& norm, const std::vector<float>& data, const std::vector<int>& batches) {
  size_t offset = 0;
  const auto d = static_cast<size_t>(norm.dim());
  for (const int rows : batches) {
    const size_t size = static_cast<size_t>(rows) * d;
    norm.update(rows, std::span(data).subspan(offset, size));
    offset += size;
  }
  REQUIRE(offset == data.size());
}

}  // namespace

TEST_CASE("ObsNormalizer matches a two-pass mean and variance over all batches") {
  Rng rng(1);
  const int dim = 4, rows = 1000;
  const auto data = observations(rows, dim, rng);
  const std::vector<int> batches = {1, 7, 300, 0, 192, 500};
  // Two passes over everything, float64.
  std::vector<double> mean(dim, 0.0), var(dim, 0.0);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < dim; ++j) mean[j] += data[static_cast<size_t>(i * dim + j)] / double{rows};
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < dim; ++j) {
      const double dev = data[static_cast<size_t>(i * dim + j)] - mean[j];
      var[j] += dev * dev / rows;
    }

  SUBCASE("without a prior") {
    ObsNormalizer norm(dim, {.initial_count = 0.0});
    feed(norm, data, batches);
    CHECK(norm.count() == rows);
    // Both are float64 computations of the same sums: they agree to ~1e-13 relative.
    for (size_t j = 0; j < dim; ++j) {
      CHECK(norm.mean()[j] == doctest::Approx(mean[j]).epsilon(1e-12).scale(1.0));
      CHECK(norm.var()[j] == doctest::Approx(var[j]).epsilon(1e-12));
    }
  }
  SUBCASE("with SB3's prior of weight 1e-4 at mean 0 and var 1") {
    ObsNormalizer norm(dim);
    feed(norm, data, batches);
    const double c = 1e-4, n = rows, total = c + n;
    CHECK(norm.count() == doctest::Approx(total).epsilon(1e-15));
    for (size_t j = 0; j < dim; ++j) {
      // The prior is one more (weighted) sample set: merge it with the data's moments.
      const double m = n * mean[j] / total;
      const double v = (c * 1.0 + n * var[j] + mean[j] * mean[j] * c * n / total) / total;
      CHECK(norm.mean()[j] == doctest::Approx(m).epsilon(1e-12).scale(1.0));
      CHECK(norm.var()[j] == doctest::Approx(v).epsilon(1e-12));
    }
  }
}

TEST_CASE("ObsNormalizer normalizes and clips") {
  ObsNormalizer norm(2, {.clip = 5.0f});
  const double mean[] = {3.0, -1.0}, var[] = {4.0, 0.25};
  norm.set_statistics(mean, var, 10.0);
  const std::vector<float> in = {5.0f, -1.5f, 3.0f, 100.0f, -1000.0f, -1.0f};
  std::vector<float> out(6);
  norm.normalize(3, in, out);
  // sqrt(var + 1e-8) differs from sqrt(var) by ~1e-9 relative: below float32 precision.
  CHECK(out[0] == doctest::Approx(1.0).epsilon(1e-6));
  CHECK(out[1] == doctest::Approx(-1.0).epsilon(1e-6));
  CHECK(out[2] == 0.0f);
  CHECK(out[3] == 5.0f);   // clipped
  CHECK(out[4] == -5.0f);  // clipped
  CHECK(out[5] == 0.0f);
  std::vector<float> inplace = in;  // out may alias in
  norm.normalize(3, inplace, inplace);
  CHECK(inplace == out);
}

TEST_CASE("ObsNormalizer ignores updates while frozen") {
  Rng rng(2);
  ObsNormalizer norm(3);
  const auto data = observations(50, 3, rng);
  norm.update(50, data);
  const std::vector<double> mean(norm.mean().begin(), norm.mean().end());
  const double count = norm.count();
  norm.set_frozen(true);
  norm.update(50, observations(50, 3, rng));
  CHECK(std::vector<double>(norm.mean().begin(), norm.mean().end()) == mean);
  CHECK(norm.count() == count);
  norm.set_frozen(false);
  norm.update(50, data);
  CHECK(norm.count() == count + 50);
}

TEST_CASE("ObsNormalizer tensors round trip bit-exactly") {
  Rng rng(3);
  ObsNormalizer norm(5);
  feed(norm, observations(300, 5, rng), {100, 200});
  const TensorMap t = norm.to_tensors();
  REQUIRE(t.size() == 3);
  CHECK(t.at("obs_norm.mean").shape == std::vector<int64_t>{5});
  CHECK(t.at("obs_norm.var").shape == std::vector<int64_t>{5});
  CHECK(t.at("obs_norm.count").shape.empty());
  CHECK(t.at("obs_norm.count").data == std::vector<float>{300.0001f});

  ObsNormalizer restored(5);
  restored.load_tensors(t);
  CHECK(restored.to_tensors() == t);
  // normalize() works from the float32 statistics, so the restored copy gives identical output.
  const auto probe = observations(40, 5, rng);
  std::vector<float> a(probe.size()), b(probe.size());
  norm.normalize(40, probe, a);
  restored.normalize(40, probe, b);
  CHECK(a == b);

  TensorMap prefixed;
  for (const auto& [name, tensor] : t) prefixed["policy." + name] = tensor;
  ObsNormalizer other(5);
  other.load_tensors(prefixed, "policy.obs_norm.");
  CHECK(other.to_tensors() == t);
}

TEST_CASE("ObsNormalizer rejects bad tensors and bad configs") {
  ObsNormalizer norm(2);
  TensorMap t = norm.to_tensors();
  TensorMap missing = t;
  missing.erase("obs_norm.count");
  CHECK_THROWS_AS(norm.load_tensors(missing), recur::Error);
  TensorMap wrong = t;
  wrong.at("obs_norm.mean") = recur::policy::Tensor::zeros({3});
  CHECK_THROWS_AS(norm.load_tensors(wrong), recur::Error);
  TensorMap negative = t;
  negative.at("obs_norm.var").data[1] = -1.0f;
  CHECK_THROWS_AS(norm.load_tensors(negative), recur::Error);
  CHECK(norm.var()[1] == 1.0);  // unchanged by the failed loads
  CHECK_THROWS_AS(ObsNormalizer(0), recur::Error);
  CHECK_THROWS_AS(ObsNormalizer(2, {.clip = 0.0f}), recur::Error);
  CHECK_THROWS_AS(ObsNormalizer(2, {.initial_count = -1.0}), recur::Error);
  CHECK_THROWS_AS(norm.update(2, std::vector<float>(3)), std::invalid_argument);
}

TEST_CASE("ObsNormalizer update and normalize do not allocate") {
  if (!recur::test::AllocationCounter::available()) {
    recur::test::skip("allocation counting is off in sanitizer builds");
    return;
  }
  Rng rng(4);
  ObsNormalizer norm(6);
  const auto data = observations(128, 6, rng);
  std::vector<float> out(data.size());
  size_t allocations = 0;
  {
    recur::test::AllocationCounter counter;
    norm.update(128, data);
    norm.normalize(128, data, out);
    allocations = counter.count();
  }
  CHECK(allocations == 0);
}
