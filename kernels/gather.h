// Index gathers: the device half of layout conversions (canonical <-> cuDNN opaque <-> step
// layout, a precomputed index per destination element) and of the sequence executor's
// (T, B) <-> padded sub-sequence reshuffles (an index per destination row). A negative index
// writes zero: gaps in a layout and padding rows.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace recur::kernels {

// dst[i] = index[i] >= 0 ? src[index[i]] : 0 for i < n.   src (any), dst (n), index (n)
void launch_gather(const float* src, float* dst, const int64_t* index, size_t n,
                   cudaStream_t stream);

// dst row r = index[r] >= 0 ? src row index[r] : zeros, rows of `width` floats.
//   src (*, width), dst (rows, width), index (rows)
void launch_gather_rows(const float* src, float* dst, const int32_t* index, int rows, int width,
                        cudaStream_t stream);

}  // namespace recur::kernels
