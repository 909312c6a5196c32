// kernels/distribution_math.h's row functions against policy::Categorical / policy::DiagGaussian
// on the host (no GPU needed; runs in CI). The row functions transcribe distributions.cc
// operation for operation, and both sides are compiled with -ffp-contract=off and call the same
// libm expf/logf, so the expected difference is ZERO: the checks are bitwise (a stronger form of
// the 1e-6 relative the device kernels are held to, where CUDA's expf/logf differ by <= 2 ulp).
// A failure here means the transcription drifted from distributions.cc.
#include "kernels/distribution_math.h"

#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/rng.h"
#include "policy/distributions.h"

namespace {

namespace k = recur::kernels;

bool same_bits(float a, float b) {
  return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

std::vector<float> uniform(recur::Rng& rng, size_t n, double lo, double hi) {
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(rng.uniform(lo, hi));
  return v;
}

}  // namespace

TEST_CASE("categorical row math equals policy Categorical bitwise") {
  recur::Rng rng(11);
  const float kNegInf = -std::numeric_limits<float>::infinity();
  for (int n : {1, 2, 5, 17}) {
    CAPTURE(n);
    const int rows = 200;
    std::vector<float> logits = uniform(rng, static_cast<size_t>(rows) * n, -6, 6);
    std::vector<float> actions(rows), d_logp = uniform(rng, rows, -2, 2),
                                      d_ent = uniform(rng, rows, -0.1, 0.1);
    for (int i = 0; i < rows; ++i) {
      float* z = logits.data() + static_cast<size_t>(i) * n;
      if (n > 1 && i % 5 == 1) z[(i / 5) % n] = kNegInf;   // an impossible action
      if (n > 2 && i % 7 == 2) z[0] = z[n - 1] = 3.0f;     // a tie at the max
      if (i % 11 == 3) z[i % n] = 40.0f;                   // others underflow to p = 0
      if (i % 13 == 4) d_ent[static_cast<size_t>(i)] = 0;  // the host's "no entropy term" path
      int a = static_cast<int>(rng.uniform_int(static_cast<uint64_t>(n)));
      while (z[a] == kNegInf) a = (a + 1) % n;  // an action the policy can take
      actions[static_cast<size_t>(i)] = static_cast<float>(a);
    }
    const recur::policy::Categorical dist(rows, n, logits);
    std::vector<float> lp(rows), ent(rows), dz(logits.size());
    dist.log_prob(actions, lp);
    dist.entropy(ent);
    dist.backward(actions, d_logp, d_ent, dz);

    std::vector<float> dz_row(static_cast<size_t>(n));
    for (int i = 0; i < rows; ++i) {
      CAPTURE(i);
      const auto r = static_cast<size_t>(i);
      const float* z = logits.data() + r * n;
      const int a = k::categorical_action_index(actions[r], n);
      REQUIRE(a == static_cast<int>(actions[r]));
      float got_lp, got_ent;
      k::categorical_row_evaluate(z, n, a, &got_lp, &got_ent);
      CHECK(same_bits(got_lp, lp[r]));
      CHECK(same_bits(got_ent, ent[r]));
      k::categorical_row_backward(z, n, a, d_logp[r], d_ent[r], dz_row.data());
      for (int j = 0; j < n; ++j) CHECK(same_bits(dz_row[static_cast<size_t>(j)], dz[r * n + j]));
    }

    // Without d_logp (the host's empty span) the row function takes action -1 and d_logp 0.
    dist.backward({}, {}, d_ent, dz);
    for (int i = 0; i < rows; ++i) {
      const auto r = static_cast<size_t>(i);
      k::categorical_row_backward(logits.data() + r * n, n, -1, 0.0f, d_ent[r], dz_row.data());
      for (int j = 0; j < n; ++j) CHECK(same_bits(dz_row[static_cast<size_t>(j)], dz[r * n + j]));
    }
  }
}

TEST_CASE("categorical action index and a row without a finite logit") {
  CHECK(k::categorical_action_index(0.0f, 3) == 0);
  CHECK(k::categorical_action_index(2.0f, 3) == 2);
  CHECK(k::categorical_action_index(3.0f, 3) == -1);
  CHECK(k::categorical_action_index(-1.0f, 3) == -1);
  CHECK(k::categorical_action_index(1.5f, 3) == -1);
  CHECK(k::categorical_action_index(std::numeric_limits<float>::quiet_NaN(), 3) == -1);
  // The host throws on such a row; the row functions, which cannot, give NaN.
  const float inf = std::numeric_limits<float>::infinity();
  const float z[3] = {-inf, -inf, -inf};
  float lp, ent, dz[3];
  k::categorical_row_evaluate(z, 3, 1, &lp, &ent);
  CHECK(std::isnan(lp));
  k::categorical_row_backward(z, 3, 1, 1.0f, 0.0f, dz);
  CHECK(std::isnan(dz[1]));
}

TEST_CASE("gaussian row math equals policy DiagGaussian bitwise") {
  recur::Rng rng(12);
  for (int dim : {1, 3, 8}) {
    CAPTURE(dim);
    const int rows = 150;
    const size_t nd = static_cast<size_t>(rows) * dim;
    const std::vector<float> mean = uniform(rng, nd, -2, 2), actions = uniform(rng, nd, -3, 3),
                             log_std = uniform(rng, static_cast<size_t>(dim), -1.5, 0.8),
                             d_logp = uniform(rng, rows, -2, 2),
                             d_ent = uniform(rng, rows, -0.1, 0.1);
    const recur::policy::DiagGaussian dist(rows, dim, mean, log_std);
    std::vector<float> lp(rows), ent(rows), d_mean(nd);
    std::vector<float> d_log_std = uniform(rng, static_cast<size_t>(dim), -1, 1);  // ADDED to
    std::vector<float> got_d_log_std = d_log_std;
    dist.log_prob(actions, lp);
    dist.entropy(ent);
    dist.backward(actions, d_logp, d_ent, d_mean, d_log_std);

    std::vector<double> acc(static_cast<size_t>(dim), 0.0);
    std::vector<float> dm_row(static_cast<size_t>(dim));
    for (int i = 0; i < rows; ++i) {
      CAPTURE(i);
      const auto r = static_cast<size_t>(i);
      float got_lp, got_ent;
      k::gaussian_row_evaluate(&mean[r * dim], log_std.data(), &actions[r * dim], dim, &got_lp,
                               &got_ent);
      CHECK(same_bits(got_lp, lp[r]));
      CHECK(same_bits(got_ent, ent[r]));
      k::gaussian_row_backward(&mean[r * dim], log_std.data(), &actions[r * dim], dim, d_logp[r],
                               d_ent[r], dm_row.data(), acc.data());
      for (int j = 0; j < dim; ++j)
        CHECK(same_bits(dm_row[static_cast<size_t>(j)], d_mean[r * dim + j]));
    }
    for (int j = 0; j < dim; ++j) {
      const auto c = static_cast<size_t>(j);
      got_d_log_std[c] += static_cast<float>(acc[c]);
      CHECK(same_bits(got_d_log_std[c], d_log_std[c]));
    }
  }
}
