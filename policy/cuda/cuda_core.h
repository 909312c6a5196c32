// One recurrent core on the GPU as a building block of a larger enqueue sequence: the CUDA
// policy actor (cuda_policy_actor.h) chains encoder, core and heads on ONE stream and captures
// the whole step as one CUDA graph, so the core cannot own its stream, staging buffers or graph
// the way CudaStepExecutor does. The math is CudaStepExecutor's exactly (same step layout, one
// cuBLAS GEMM per layer over the xh stack, the same cell_gates kernels); see
// cuda_step_executor.h for the drawing of the xh stack and the step layout.
//
// The state memory belongs to the owner: the core is given a device pointer to
// state_floats(spec, B) floats laid out as
//
//   [ xh stack (kernels/cell_gates.h) | c (L, B, H), LSTM only ]
//
// so that an owner with several cores keeps all their state in one buffer (one bulk copy to save,
// restore, download or upload every slot's state). The x columns of the xh stack are scratch:
// every step overwrites them before the GEMM reads them.
//
// Threading: the owner's. The core binds nothing to a device; the owner makes its device current.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "kernels/cuda_memory.h"
#include "policy/canonical_weights.h"
#include "policy/convert/flat_layout.h"

namespace recur::policy {

class CudaCore {
 public:
  // Floats of one core's state image (see above) for `slots` slots.
  static size_t state_floats(const CoreSpec& spec, int slots);

  // state: device memory of state_floats(spec, slots) floats, owned by the caller and alive as
  // long as the core. stream: where load() uploads (the owner's stream).
  CudaCore(const CoreSpec& spec, int slots, float* state, cudaStream_t stream);

  const CoreSpec& spec() const { return spec_; }
  // Canonical weights -> the step layout in device memory (fixed address; returns when done).
  // Named as StepExecutor::load so that load_network() drives it.
  void load(const CanonicalWeights& weights);

  // The weights in the step layout (layout().size floats of device memory, fixed address).
  float* weights() { return weights_.data(); }
  const float* weights() const { return weights_.data(); }
  const FlatLayout& layout() const { return layout_; }

  // Enqueues one step of all slots on `stream` (cublas must be bound to the same stream):
  //   x (B, input) device, starts (B) device episode_start, out (B, H) device: the top
  //   layer's h. One prepare kernel places x and resets the starting slots, then per layer one
  //   GEMM and one gate kernel.
  void enqueue(cublasHandle_t cublas, const float* x, const uint8_t* starts, float* out,
               cudaStream_t stream);

  // Float offsets inside the state image of a slot's h (H floats) and c (H floats) of a layer.
  size_t h_offset(int layer, int slot) const;
  size_t c_offset(int layer, int slot) const;
  bool has_c() const;

 private:
  CoreSpec spec_;
  int slots_;
  float* state_;  // (state_floats) not owned
  cudaStream_t stream_;
  FlatLayout layout_;
  std::vector<StepLayerOffsets> offsets_;  // per layer, in layout_
  int columns_;                            // C
  kernels::DeviceBuffer<float> weights_;   // (layout_.size) step layout
  kernels::DeviceBuffer<float> gates_;     // (B, C) workspace
};

}  // namespace recur::policy
