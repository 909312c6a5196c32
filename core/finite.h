// Finding the first NaN or infinity in a buffer, and saying where it is: the checks that keep a
// non-finite value from entering a checkpoint, the weights or a rollout unnoticed.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace recur {

// Index of the first value that is NaN or +-inf, if any.
template <typename T>
std::optional<size_t> first_nonfinite(std::span<const T> values) {
  for (size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i])) return i;
  return std::nullopt;
}

// "index 17 = [0, 17] of shape [2, 9]" (the flat index and, for shapes of rank >= 2, the element's
// coordinates), so that a message points at the weight itself.
inline std::string describe_index(size_t flat, const std::vector<int64_t>& shape) {
  if (shape.size() < 2) return fmt::format("index {}", flat);
  std::vector<int64_t> at(shape.size());
  auto rest = static_cast<int64_t>(flat);
  for (size_t d = shape.size(); d-- > 0;) {
    const int64_t extent = shape[d] > 0 ? shape[d] : 1;
    at[d] = rest % extent;
    rest /= extent;
  }
  return fmt::format("index {} = [{}] of shape [{}]", flat, fmt::join(at, ", "),
                     fmt::join(shape, ", "));
}

}  // namespace recur
