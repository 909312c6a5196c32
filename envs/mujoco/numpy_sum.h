// Sums in NumPy's order, so that recur's rewards equal Gymnasium's bit for bit. Gymnasium's ctrl
// cost is weight * np.sum(np.square(action)) on the float32 action: NumPy 2 squares and sums in
// float32, and (NEP 50) multiplies by the Python float weight in float32 too. np.sum adds up to
// 8 values in order and longer arrays (up to 128) in 8 interleaved partial sums, combined
// pairwise (NumPy's pairwise_sum); checked against NumPy 2.4 for sizes 1..17 and 84.
#pragma once

#include <cstddef>
#include <span>

#include "core/error.h"

namespace recur::envs {

template <typename T>
T numpy_sum(std::span<const T> a) {
  const size_t n = a.size();
  if (n < 8) {
    T sum = 0;
    for (size_t i = 0; i < n; ++i) sum += a[i];
    return sum;
  }
  if (n <= 128) {
    T r[8];
    for (size_t j = 0; j < 8; ++j) r[j] = a[j];
    size_t i = 8;
    for (; i < n - n % 8; i += 8)
      for (size_t j = 0; j < 8; ++j) r[j] += a[i + j];
    T sum = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) sum += a[i];
    return sum;
  }
  size_t half = n / 2;
  half -= half % 8;
  return numpy_sum(a.first(half)) + numpy_sum(a.subspan(half));
}

// Gymnasium's control_cost: weight * np.sum(np.square(action)) for a float32 action.
inline float numpy_ctrl_cost(double weight, std::span<const float> action) {
  float squares[64];  // actions of recur's MuJoCo envs have at most 17 values
  RECUR_ASSERT(action.size() <= 64);
  const size_t n = action.size();
  for (size_t i = 0; i < n; ++i) squares[i] = action[i] * action[i];
  return static_cast<float>(weight) * numpy_sum(std::span<const float>(squares, n));
}

}  // namespace recur::envs
