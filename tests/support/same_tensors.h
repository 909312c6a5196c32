// Two tensor maps hold the same names, shapes and bytes (a checkpoint loaded, a state restored):
// doctest checks naming the first tensor that differs.
#pragma once

#include <doctest/doctest.h>

#include "policy/checkpoint.h"

namespace recur::test {

inline void check_same_tensors(const policy::TensorMap& a, const policy::TensorMap& b) {
  REQUIRE(a.size() == b.size());
  for (const auto& [name, t] : a) {
    INFO(name);
    const auto it = b.find(name);
    REQUIRE(it != b.end());
    CHECK(it->second.shape == t.shape);
    CHECK(it->second.data == t.data);
  }
}

}  // namespace recur::test
