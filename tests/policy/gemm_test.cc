#include "policy/gemm.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <vector>

#include "core/rng.h"

using recur::policy::gemm;
using recur::policy::Transpose;

TEST_CASE("gemm matches a float64 reference for every transpose across tile edges") {
  recur::Rng rng(11);
  // Each dimension crosses its tile (depth 128, panels 32768 / 128 = 256) with a ragged last tile.
  const int m = 257, n = 258, k = 129;
  std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
  for (auto& x : a) x = static_cast<float>(rng.uniform(-1, 1));
  for (auto& x : b) x = static_cast<float>(rng.uniform(-1, 1));
  for (const Transpose ta : {Transpose::kNo, Transpose::kYes})
    for (const Transpose tb : {Transpose::kNo, Transpose::kYes}) {
      CAPTURE(static_cast<int>(ta));
      CAPTURE(static_cast<int>(tb));
      auto at = [&](int i, int p) {  // op(A)(i, p)
        return static_cast<double>(ta == Transpose::kNo ? a[static_cast<size_t>(i * k + p)]
                                                        : a[static_cast<size_t>(p * m + i)]);
      };
      auto bt = [&](int p, int j) {  // op(B)(p, j)
        return static_cast<double>(tb == Transpose::kNo ? b[static_cast<size_t>(p * n + j)]
                                                        : b[static_cast<size_t>(j * k + p)]);
      };
      std::vector<float> c(static_cast<size_t>(m * n), 1.0f);
      gemm(m, n, k, a, ta, b, tb, c, /*accumulate=*/true);
      double worst = 0;
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
          double ref = 1.0;
          for (int p = 0; p < k; ++p) ref += at(i, p) * bt(p, j);
          worst = std::max(worst, std::abs(ref - c[static_cast<size_t>(i * n + j)]));
        }
      // 129-term float32 sums of products in [-1, 1]: sums ~sqrt(129) = 11, rounding ~1e-5.
      CHECK(worst < 1e-4);
      gemm(m, n, k, a, ta, b, tb, c, /*accumulate=*/false);
      CHECK(c[0] == doctest::Approx([&] {
                      double r = 0;
                      for (int p = 0; p < k; ++p) r += at(0, p) * bt(p, 0);
                      return r;
                    }())
                        .epsilon(1e-4));
    }
}

TEST_CASE("gemm with zero depth sets or keeps C") {
  std::vector<float> c(6, 3.0f);
  gemm(2, 3, 0, {}, Transpose::kNo, {}, Transpose::kNo, c, /*accumulate=*/true);
  for (const float x : c) CHECK(x == 3.0f);
  gemm(2, 3, 0, {}, Transpose::kNo, {}, Transpose::kNo, c, /*accumulate=*/false);
  for (const float x : c) CHECK(x == 0.0f);
}

// The products of the engine, the step executor and the heads: few rows (a step's minibatch of 1
// to 17 sequences) against wide weights, every transpose, accumulating and overwriting. An
// overwrite must not read C (it is NaN here): LIBXSMM's kernels take beta = 0 for it.
TEST_CASE("gemm is exact to float rounding on small and thin shapes, and an overwrite ignores C") {
  recur::Rng rng(12);
  for (const int m : {1, 2, 3, 4, 5, 8, 17})
    for (const auto& [n, k] : {std::pair{256, 64}, std::pair{64, 256}, std::pair{7, 136},
                               std::pair{512, 8}, std::pair{20, 2100}})
      for (const Transpose ta : {Transpose::kNo, Transpose::kYes})
        for (const Transpose tb : {Transpose::kNo, Transpose::kYes})
          for (const bool accumulate : {true, false}) {
            CAPTURE(m);
            CAPTURE(n);
            CAPTURE(k);
            CAPTURE(static_cast<int>(ta));
            CAPTURE(static_cast<int>(tb));
            CAPTURE(accumulate);
            std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
            for (auto& x : a) x = static_cast<float>(rng.uniform(-1, 1));
            for (auto& x : b) x = static_cast<float>(rng.uniform(-1, 1));
            const float start = accumulate ? 0.5f : std::nanf("");
            std::vector<float> c(static_cast<size_t>(m * n), start);
            gemm(m, n, k, a, ta, b, tb, c, accumulate);
            double worst = 0;
            for (int i = 0; i < m; ++i)
              for (int j = 0; j < n; ++j) {
                double ref = accumulate ? 0.5 : 0.0;
                for (int p = 0; p < k; ++p) {
                  const float ai = ta == Transpose::kNo ? a[static_cast<size_t>(i * k + p)]
                                                        : a[static_cast<size_t>(p * m + i)];
                  const float bj = tb == Transpose::kNo ? b[static_cast<size_t>(p * n + j)]
                                                        : b[static_cast<size_t>(j * k + p)];
                  ref += static_cast<double>(ai) * bj;
                }
                // NaN compares false: an overwrite that read C fails here.
                const double err = std::abs(ref - c[static_cast<size_t>(i * n + j)]);
                worst = std::isnan(err) ? 1e9 : std::max(worst, err);
              }
            // Sums of up to 2100 products in [-1, 1]: ~sqrt(2100) = 46, float rounding ~1e-4.
            CHECK(worst < 2e-4 * std::sqrt(static_cast<double>(k)));
          }
}

// A^T B with a deep k (a weight gradient over a sequence's T*B rows) runs in depth slices where the
// build has LIBXSMM (policy/gemm.cc, depth_slice): slices of 256 and of 16, each with a ragged last
// slice. The first slice overwrites (C starts as NaN there) or accumulates, the rest accumulate;
// a slice dropped, repeated or offset shows as an error of the size of its sum.
TEST_CASE("gemm of a deep A^T B, cut into depth slices, sums every row once") {
  recur::Rng rng(13);
  for (const auto& [m, n, k] : {std::tuple{96, 40, 3001}, std::tuple{2600, 8, 120}})
    for (const bool accumulate : {true, false}) {
      CAPTURE(m);
      CAPTURE(k);
      CAPTURE(accumulate);
      std::vector<float> a(static_cast<size_t>(k) * m), b(static_cast<size_t>(k) * n);
      for (auto& x : a) x = static_cast<float>(rng.uniform(-1, 1));
      for (auto& x : b) x = static_cast<float>(rng.uniform(-1, 1));
      std::vector<float> c(static_cast<size_t>(m) * n, accumulate ? 0.5f : std::nanf(""));
      gemm(m, n, k, a, Transpose::kYes, b, Transpose::kNo, c, accumulate);
      double worst = 0;
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
          double ref = accumulate ? 0.5 : 0.0;
          for (int p = 0; p < k; ++p)
            ref += static_cast<double>(a[static_cast<size_t>(p) * m + i]) *
                   b[static_cast<size_t>(p) * n + j];
          const double err = std::abs(ref - c[static_cast<size_t>(i) * n + j]);
          worst = std::isnan(err) ? 1e9 : std::max(worst, err);
        }
      CHECK(worst < 2e-4 * std::sqrt(static_cast<double>(k)));
    }
}
