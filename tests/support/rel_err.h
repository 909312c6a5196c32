// The relative error every parity test reports: ||a - b|| / ||b|| in double (b the reference),
// with a floor on ||b|| so that an all-zero reference does not divide by zero.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <span>

namespace recur::test {

template <typename T>
double rel_err_of(std::span<const T> a, std::span<const T> b) {
  REQUIRE(a.size() == b.size());
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = static_cast<double>(a[i]) - static_cast<double>(b[i]);
    num += d * d;
    den += static_cast<double>(b[i]) * static_cast<double>(b[i]);
  }
  return std::sqrt(num) / std::max(std::sqrt(den), 1e-30);
}

inline double rel_err(std::span<const float> a, std::span<const float> b) {
  return rel_err_of(a, b);
}
inline double rel_err(std::span<const double> a, std::span<const double> b) {
  return rel_err_of(a, b);
}

}  // namespace recur::test
