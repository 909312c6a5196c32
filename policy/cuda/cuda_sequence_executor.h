// The fused CUDA sequence executor: the learner's core on a GPU for the cells cuDNN's RNN lacks,
// the layer-norm LSTM (lstm_ln) and minGRU (mingru, mingru_highway), behind DeviceSequenceExecutor.
// It is the CPU sequence engine's algorithm (policy/cpu/sequence_engine.h) on the device, with the
// time loop kept on the stream (per-step launches, no host round trip inside a call):
//
//   lstm_ln, per layer:  one cuBLAS GEMM for the input projection of all T*B rows; per step the
//     effective previous state (zeros at an episode start: resets happen inside the loop), one
//     GEMM for the recurrent projection and one fused kernel for the five layer norms, gates and
//     cell update (kernels/sequence_cells.h). Backward per step: one fused kernel (LayerNorm's
//     transpose inside the gate pass), one GEMM for dh_prev, one masked carry; after the loop one
//     GEMM each for dW_hh, dW_ih and the input gradient of all rows, and column sums for the
//     gains and shifts.
//   mingru, per layer:   one GEMM, then ONE parallel-scan kernel over all T steps (the gates do
//     not read h); backward: one reverse scan kernel and the GEMMs. Stacks are residual;
//     mingru_highway adds one elementwise highway kernel after the scan (and its transpose
//     before the reverse scan).
//
// Weights in the canonical flat order (flat_layout.h: layout() is canonical_layout()), so the
// actor's gather and the checkpoint need no other map. Host mirrors and the device-resident mode
// work as in the cuDNN executor (cudnn_sequence_executor.h): the host mirrors are the truth
// until set_device_resident(true), after which the device copies are.
//
// Not thread-safe; one executor per thread. Host-span calls synchronize the stream before
// returning; the *_device calls do not.
#pragma once

#include <cublas_v2.h>

#include <memory>
#include <vector>

#include "kernels/cuda_memory.h"
#include "policy/cuda/cublas_handle.h"
#include "policy/cuda/device_sequence_executor.h"

namespace recur::policy {

class CudaSequenceExecutor final : public DeviceSequenceExecutor {
 public:
  // Throws recur::Error for a cell it does not run (cuDNN's four: make_device_sequence).
  CudaSequenceExecutor(const CoreSpec& spec, int device = 0, cudaStream_t stream = nullptr);
  ~CudaSequenceExecutor() override;

  std::span<float> parameters() override {
    refresh_mirrors();
    return host_w_.span();
  }
  std::span<float> parameter_gradients() override {
    refresh_mirrors();
    return host_dw_.span();
  }
  const FlatLayout& parameter_layout() const override { return layout_; }

  float* device_weights() override { return w_.data(); }
  const float* device_weights() const override { return w_.data(); }
  float* device_gradients() override { return dw_.data(); }
  const FlatLayout& layout() const override { return layout_; }
  cudaStream_t stream() const override {
    return external_stream_ ? external_stream_ : stream_.get();
  }

  void set_device_resident(bool on) override;
  bool device_resident() const override { return device_resident_; }

 private:
  void forward_device_impl(int T, int B, const float* x, std::span<const uint8_t> episode_start,
                           std::span<const float> initial_state, const DeviceStateTable* table,
                           float* y) override;
  void backward_device_impl(const float* dy, float* dx) override;
  void load_impl(const CanonicalWeights& weights) override;
  CanonicalWeights weights_impl() const override;
  void forward_impl(int T, int B, std::span<const float> x, std::span<const uint8_t> episode_start,
                    std::span<const float> initial_state, std::span<float> y,
                    std::span<float> final_state) override;
  void backward_impl(std::span<const float> dy, std::span<float> dx,
                     std::span<float> d_initial_state) override;
  void zero_gradients_impl() override;
  CanonicalWeights gradients_impl() const override;

  void use_device() const;
  void sync() const;
  void refresh_mirrors() const;
  // Uploads the episode starts and the initial states (from the host, or gathered from a device
  // table) of a (T, B) batch and grows the buffers; host-mirror mode uploads the weights too.
  void stage(int T, int B, std::span<const uint8_t> episode_start,
             std::span<const float> initial_state, const DeviceStateTable* table);
  // The layers over the staged batch from device x (copied in: backward reads it) into device y.
  void run_forward(const float* x, float* y);
  void layer_forward(int k);
  // dy device -> dx device (or null); d_h0_/d_c0_ get the initial state's gradient when asked.
  void run_backward(const float* dy, float* dx, bool want_initial);
  void layer_backward(int k, bool want_input, bool want_initial);
  const float* layer_output(int k) const;
  const float* layer_input(int k) const;

  int device_;
  kernels::CudaStream stream_;  // used unless an external stream was given; before the handle
  cudaStream_t external_stream_ = nullptr;
  std::unique_ptr<CublasHandle> cublas_;
  bool device_resident_ = false;
  bool have_forward_ = false;
  int t_ = 0, b_ = 0;

  FlatLayout layout_;
  kernels::DeviceBuffer<float> w_, dw_;
  mutable kernels::PinnedBuffer<float> host_w_, host_dw_;

  // What backward reads, per layer (rows t * B + b).
  struct Layer {
    kernels::DeviceBuffer<float> gates;         // (T*B, G*H) activations
    kernels::DeviceBuffer<float> h, h_prev;     // (T*B, H) output and effective previous h
    kernels::DeviceBuffer<float> c, c_prev;     // lstm_ln (T*B, H)
    kernels::DeviceBuffer<float> tanh_c, xhat;  // lstm_ln (T*B, H), (T*B, 5H)
    kernels::DeviceBuffer<float> rstd;          // lstm_ln (T*B, 5)
    kernels::DeviceBuffer<float> out;           // residual minGRU k >= 1: h + input; highway's
  };
  std::vector<Layer> layers_;
  kernels::DeviceBuffer<float> x_;             // (T*B, in) layer 0's input
  kernels::DeviceBuffer<uint8_t> starts_;      // (T*B)
  kernels::DeviceBuffer<float> h0_, c0_;       // (L, B, H) initial states
  kernels::DeviceBuffer<int32_t> state_rows_;  // (B) rows of a device state table
  // Backward workspaces.
  kernels::DeviceBuffer<float> dgates_, dnorm_;  // (T*B, G*H), (T*B, 5H)
  kernels::DeviceBuffer<double> sum_scratch_;    // kernels::column_sums_scratch's row ranges
  kernels::DeviceBuffer<float> dskip_;           // mingru_highway: (T*B, H) d out_{k-1} via skip
  kernels::DeviceBuffer<float> dh_out_, din_;    // (T*B, H), (T*B, max(in, H))
  kernels::DeviceBuffer<float> dh_next_, dc_next_, dh_prev_, dc_prev_;  // (B, H)
  kernels::DeviceBuffer<float> dh0_, dc0_;  // (L, B, H) the initial state's gradient
  kernels::DeviceBuffer<float> dy_, dx_;    // host-span calls: y / dy, and dx
  // Host staging, two slots used in turn (a call waits only for the uploads of the call before
  // the previous one): starts, state rows and initial states.
  kernels::PinnedBuffer<uint8_t> pin_starts_[2];
  kernels::PinnedBuffer<int32_t> pin_rows_[2];
  kernels::PinnedBuffer<float> pin_state_[2];
  kernels::CudaEvent staged_[2];
  int slot_ = 0;
  kernels::PinnedBuffer<float> pin_io_;  // host-span calls: x, y, dy, dx, states
};

}  // namespace recur::policy
