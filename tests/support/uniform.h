// Test data: a vector of floats drawn uniformly from [low, high).
#pragma once

#include <cstddef>
#include <vector>

#include "core/rng.h"

namespace recur::test {

inline std::vector<float> uniform(size_t size, double low, double high, Rng& rng) {
  std::vector<float> v(size);
  for (auto& x : v) x = static_cast<float>(rng.uniform(low, high));
  return v;
}

}  // namespace recur::test
