// A wrong gate order on purpose, for the converter tests: swaps column blocks a and b (each of
// width h) of a (rows, G*H) matrix stored row-major, as TF and Keras store kernels.
#pragma once

#include <cstdint>
#include <utility>

#include "policy/tensor.h"

namespace recur::test {

inline void swap_blocks(policy::Tensor& t, int64_t a, int64_t b, int64_t h) {
  const int64_t cols = t.shape.back(), rows = t.numel() / cols;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < h; ++j)
      std::swap(t.data[static_cast<size_t>(r * cols + a * h + j)],
                t.data[static_cast<size_t>(r * cols + b * h + j)]);
}

}  // namespace recur::test
