// Casts between fp32 and the 16-bit floats cuDNN's RNN takes as data (device.cudnn_data fp16 or
// bf16): the cuDNN sequence executor keeps fp32 master weights, gradients and activations at its
// interface and runs cuDNN on 16-bit copies made by these kernels just before each call and read
// back just after (policy/cudnn/cudnn_sequence_executor.h, "Low-precision data").
//
// 16-bit values travel as uint16_t bit patterns so that callers need no CUDA half headers.
// To 16 bits: round to nearest, ties to even (__float2half_rn, __float2bfloat16_rn); values past
// the type's range become infinities (fp16: |x| > 65504), which the learner's non-finite step
// guard then skips. From 16 bits: exact.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace recur::kernels {

enum class LowFloat { kHalf, kBfloat16 };

// dst[i] = to16(scale * src[i]), i < n.
void launch_to_low_float(const float* src, uint16_t* dst, size_t n, float scale, LowFloat type,
                         cudaStream_t stream);
// dst[i] = scale * float(src[i]), i < n.
void launch_from_low_float(const uint16_t* src, float* dst, size_t n, float scale, LowFloat type,
                           cudaStream_t stream);
// A layout conversion into 16 bits (policy/convert/flat_layout.h conversion_index):
// dst[i] = index[i] >= 0 ? to16(src[index[i]]) : 0, i < n.
void launch_gather_to_low_float(const float* src, uint16_t* dst, const int64_t* index, size_t n,
                                LowFloat type, cudaStream_t stream);
// Its transpose, accumulating: dst[index[i]] += scale * float(src[i]) where index[i] >= 0.
// index must not repeat a destination (a conversion index never does), so no atomics.
void launch_scatter_add_from_low_float(const uint16_t* src, float* dst, const int64_t* index,
                                       size_t n, float scale, LowFloat type, cudaStream_t stream);

}  // namespace recur::kernels
