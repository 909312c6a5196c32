// The CUDA step executor: the actor's recurrent core on one GPU, weights and the state of all B
// slots resident in device memory. It computes what CpuStepExecutor computes (the block-cell
// form: per layer ONE GEMM over [x, h] and ONE fused elementwise kernel), so the two are
// interchangeable behind StepExecutor (the tests require 1e-5 relative).
//
// One step, all on the executor's own stream:
//
//   pinned block [x (B, in) | episode_start (B)] --ONE contiguous H2D copy--> device block
//   prepare kernel: x -> xh_0[:, 0:in]; slots with episode_start = 1 get h = 0 in every xh_k
//                   and c = 0 (all layers)
//   (until 2026-11-23: a 2D copy of x straight from pinned memory, B rows of `in` floats, and a
//   separate reset kernel; B narrow rows across PCIe were the first suspect for the H100's
//   145 us step at B 1024 against PyTorch's 81 us. Not yet measured.)
//   for k in 0..L-1:
//     gates (B, C) = xh_k (B, K_k) * w_k (K_k, C)                      cuBLAS SGEMM, no bias
//     gate kernel: bias + activations + cell update; new h -> xh_k[:, in_k:] (the state, in
//                  place), -> xh_{k+1}[:, 0:H] (next layer's input), top layer -> out (B, H)
//   out (B, H) --> pinned --> h_out;  the host waits for the stream (step is synchronous)
//
// Layouts (all row-major float32):
//   weights   one buffer in policy::step_layout(spec) (flat_layout.h): per layer w (K_k, C),
//             bias_ih (G*H), bias_hh (G*H); C = 4H for LSTM and GRU (r | z | n_x | n_h), H for
//             RNN. Loads overwrite it in place.
//   xh        the "xh stack" of kernels/cell_gates.h: per layer (B, K_k = in_k + H), columns
//             0..in_k-1 the layer input, in_k.. the layer's h. The h columns ARE the h state;
//             there is no separate h buffer, so the GEMM reads the state where it lives.
//   c         (L, B, H), LSTM only, after the xh stack in the same state buffer.
// The core itself (weights, GEMMs, gate kernels, state offsets) is CudaCore (cuda_core.h), the
// block the CUDA policy actor also builds on; this class adds the stream, cuBLAS, the pinned
// staging of the StepExecutor interface and the graph.
//
// Zero-copy I/O (options.io = StepIo::kMapped, kernels/mapped_io.h): the input block (with a
// sequence number) lives in mapped host memory, a fetch kernel brings it to the device instead
// of the H2D copy, and after the same kernels an emit kernel writes h
// into a mapped output block and then the sequence number into a mapped flag the host spins on:
// no memcpy node and no stream synchronization per step. `recur bench rnn-gpu` (rows
// cuda-step-mapped) compares them: on an H200 mapped was faster at every shape, half the time at
// B 1 (docs/PERFORMANCE.md, "GPU, second run"); the copy path above stays the default after one
// card and one run.
//
// CUDA graph (options.use_graph): the first step runs the plain enqueue path, so that cuBLAS's
// heuristics and the lazy module loader do their first-call work outside capture (the warm-up
// PyTorch does before capturing); the same sequence is captured right after it and replayed
// from then on. Every buffer is allocated in the
// constructor and never moves, so the graph stays valid across load / load_device (weights are
// rewritten in place) and across get/set/reset of state (plain copies on the same stream,
// outside the graph). Nothing is allocated per step.
//
// GEMM: cuBLAS SGEMM, not a kernel of our own. At actor sizes (B = 1..1024, K = in_k + H,
// C <= 4H, H = 64..512) a step is small and latency-bound; an own kernel could fuse bias and
// gates into the GEMM's epilogue and save one launch and one (B, C) round trip per layer, but
// cuBLAS is the correct, tuned baseline. `recur bench rnn-gpu` (tools/cli/bench/bench_rnn_gpu.h)
// measures the step: on an H200 it is at or ahead of PyTorch's CUDA-graph LSTMCell at every
// shape measured (docs/PERFORMANCE.md, "GPU, second run"), so no fused kernel has been tried.
// CUBLAS_DEFAULT_MATH (no TF32): fp32 parity with the CPU executor is part of the contract.
//
// Threading and devices: like every StepExecutor, one thread at a time. Each public call first
// makes options.device the calling thread's current device (and leaves it so).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/cuda_memory.h"
#include "policy/convert/flat_layout.h"
#include "policy/cuda/cublas_handle.h"
#include "policy/cuda/cuda_core.h"
#include "policy/executor.h"
#include "policy/gpu_executors.h"

namespace recur::policy {

class CudaStepExecutor final : public StepExecutor {
 public:
  CudaStepExecutor(const CoreSpec& spec, int slots, const CudaStepOptions& options);
  ~CudaStepExecutor() override;  // waits for the stream
  CudaStepExecutor(const CudaStepExecutor&) = delete;
  CudaStepExecutor& operator=(const CudaStepExecutor&) = delete;

  // Loads weights that already live on this executor's device in another layout (e.g. the cuDNN
  // learner's opaque buffer): one gather kernel into the step layout, the same result as
  // load(canonical). src (src_layout.size floats) is read after all work already queued on
  // src_stream; the call returns when the copy is done, so the caller may overwrite src at once.
  // The gather index is built on the host the first time a source layout is seen and cached.
  void load_device(const float* src, const FlatLayout& src_layout, cudaStream_t src_stream);

  const FlatLayout& layout() const { return core_.layout(); }  // the step layout of the weights
  cudaStream_t stream() const { return stream_.get(); }
  const CudaStepOptions& options() const { return options_; }

 private:
  void load_impl(const CanonicalWeights& weights) override;
  CanonicalWeights weights_impl() const override;
  void step_impl(std::span<const float> x, std::span<const uint8_t> episode_start,
                 std::span<float> h_out) override;
  void get_state_impl(int slot, std::span<float> out) const override;
  void set_state_impl(int slot, std::span<const float> state) override;
  void reset_impl(int slot) override;

  // Enqueues one whole step (inputs from the pinned staging buffers, output to pinned out_host_)
  // on `stream`: the plain path, and what the graph captures.
  void record(cudaStream_t stream);
  void activate() const;  // makes options_.device current for this thread
  bool mapped() const { return options_.io == StepIo::kMapped; }

  CudaStepOptions options_;
  int device_;  // first member after options_: set current before any allocation below

  kernels::CudaStream stream_;  // declared before the handle: destroyed after it
  std::unique_ptr<CublasHandle> cublas_;

  kernels::DeviceBuffer<float> state_;  // (CudaCore::state_floats) xh stack + c: the state
  CudaCore core_;                       // weights and the step's math, on state_
  kernels::DeviceBuffer<float> out_;    // (B, H) top layer's new h
  mutable kernels::PinnedBuffer<float> state_host_;  // (S) staging of get/set_state

  // The input block [ x (B, in) float | starts (B) u8 | pad | sequence u32 | pad to 16 ]: pinned
  // (copy) or mapped (zero-copy) on the host, in_dev_ on the device; the output h (B, H) in
  // pinned or mapped host memory. The sequence number is used by the zero-copy emit only.
  size_t in_starts_ = 0, in_sequence_ = 0, in_bytes_ = 0;  // byte offsets, size
  kernels::PinnedBuffer<unsigned char> in_host_;
  kernels::MappedBuffer<unsigned char> in_mapped_;
  kernels::DeviceBuffer<unsigned char> in_dev_;
  kernels::PinnedBuffer<float> out_host_;    // (B, H)
  kernels::MappedBuffer<float> out_mapped_;  // (B, H)
  kernels::MappedBuffer<uint32_t> flag_;
  kernels::DeviceBuffer<unsigned int> emit_counter_;
  uint32_t sequence_ = 0;

  kernels::CudaGraph graph_;
  bool graph_pending_ = false;  // use_graph and not yet captured

  // load_device's cached gather index (layout_.size) for the last source layout seen.
  std::vector<int64_t> cached_src_position_;
  int64_t cached_src_size_ = -1;
  kernels::DeviceBuffer<int64_t> conversion_index_;
};

}  // namespace recur::policy
