// A named float32 tensor as checkpoints and converters move it: row-major data and a shape.
// Executors keep their own layouts; this is the exchange format only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <numeric>
#include <string>
#include <vector>

namespace recur::policy {

struct Tensor {
  std::vector<int64_t> shape;  // row-major; {} is a scalar
  std::vector<float> data;     // numel() values

  Tensor() = default;
  Tensor(std::vector<int64_t> s, std::vector<float> d) : shape(std::move(s)), data(std::move(d)) {}
  static Tensor zeros(std::vector<int64_t> s) {
    const int64_t n = std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>());
    return Tensor(std::move(s), std::vector<float>(static_cast<size_t>(n), 0.0f));
  }
  int64_t numel() const {
    return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
  }
  bool operator==(const Tensor&) const = default;
};

// Ordered by name, so files and listings are deterministic.
using TensorMap = std::map<std::string, Tensor>;

}  // namespace recur::policy
