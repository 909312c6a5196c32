#include "envs/space.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

using recur::envs::Space;

TEST_CASE("Discrete contains integers from 0 to n-1 only") {
  const Space s = Space::discrete(3);
  for (float v : {0.0f, 1.0f, 2.0f}) CHECK(s.contains(std::span(&v, 1)));
  for (float v : {-1.0f, 3.0f, 0.5f, std::nanf("")}) CHECK_FALSE(s.contains(std::span(&v, 1)));
  const float two[2] = {0, 1};
  CHECK_FALSE(s.contains(two));
  CHECK(s.to_string() == "Discrete(3)");
  CHECK_THROWS_AS(Space::discrete(0), std::invalid_argument);
}

TEST_CASE("Box bounds and text form and sampling") {
  const float inf = std::numeric_limits<float>::infinity();
  const Space b = Space::box({-1, -inf, 0}, {1, inf, inf});
  CHECK(b.flat_size() == 3);
  CHECK(b.to_string() == "Box([-1 -inf 0], [1 inf inf], (3,), float32)");
  CHECK(Space::box(-2, 2, {1}).to_string() == "Box(-2, 2, (1,), float32)");
  CHECK(Space::box(0, 1, {2, 3}).to_string() == "Box(0, 1, (2,3), float32)");
  const float in[3] = {0.5f, -1e30f, 3}, out[3] = {1.5f, 0, 0}, nan[3] = {0, std::nanf(""), 0};
  CHECK(b.contains(in));
  CHECK_FALSE(b.contains(out));
  CHECK_FALSE(b.contains(nan));
  recur::Rng rng(1);
  float x[3];
  double mean0 = 0;
  for (int i = 0; i < 1000; ++i) {
    b.sample(rng, x);
    CHECK(b.contains(x));
    mean0 += x[0] / 1000.0;
  }
  CHECK(std::abs(mean0) < 0.1);
  CHECK_THROWS_AS(Space::box({1}, {0}), std::invalid_argument);
}

TEST_CASE("Discrete sampling covers every value about equally") {
  const Space s = Space::discrete(4);
  recur::Rng rng(2);
  int counts[4] = {};
  for (int i = 0; i < 4000; ++i) {
    float v;
    s.sample(rng, std::span(&v, 1));
    counts[static_cast<int>(v)]++;
  }
  for (int c : counts) CHECK((c > 850 && c < 1150));
}
