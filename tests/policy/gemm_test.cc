#include "policy/gemm.h"

#include <doctest/doctest.h>

#include <cmath>
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
