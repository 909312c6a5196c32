#include "core/rng.h"

#include <doctest/doctest.h>

#include <cmath>

TEST_CASE("Rng: same seed gives the same stream and state save and restore") {
  recur::Rng a(123), b(123), c(124);
  for (int i = 0; i < 100; ++i) {
    const auto x = a.next_u64();
    CHECK(x == b.next_u64());
    CHECK(x != c.next_u64());
  }
  const auto saved = a.state();
  const double next = a.uniform();
  a.set_state(saved);
  CHECK(a.uniform() == next);
}

TEST_CASE("Rng: the stream is fixed across platforms and builds") {
  // Pinned values: a change here changes every seeded episode of every user.
  recur::Rng r(0);
  CHECK(r.next_u64() == 0x99ec5f36cb75f2b4ULL);
  CHECK(recur::derive_seed(0, 0) != recur::derive_seed(0, 1));
  CHECK(recur::derive_seed(5, 3) == recur::derive_seed(5, 3));
}

TEST_CASE("Rng: distributions have the right moments") {
  recur::Rng r(7);
  const int n = 200000;
  double su = 0, sn = 0, sn2 = 0, se = 0;
  int bins[5] = {};
  for (int i = 0; i < n; ++i) {
    const double u = r.uniform(-1, 3);
    CHECK((u >= -1 && u < 3));
    su += u;
    const double z = r.normal();
    sn += z;
    sn2 += z * z;
    se += r.exponential();
    bins[r.uniform_int(5)]++;
  }
  CHECK(su / n == doctest::Approx(1.0).epsilon(0.01));
  CHECK(std::abs(sn / n) < 0.01);
  CHECK(sn2 / n == doctest::Approx(1.0).epsilon(0.02));
  CHECK(se / n == doctest::Approx(1.0).epsilon(0.02));
  for (int b : bins) CHECK(b == doctest::Approx(n / 5.0).epsilon(0.03));
}
