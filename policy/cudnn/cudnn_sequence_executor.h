// The cuDNN sequence executor: the learner's core on a GPU, one cudnnRNNForward (TRAINING) and one
// cudnnRNNBackwardData_v8 + cudnnRNNBackwardWeights_v8 per call, behind SequenceExecutor.
//
// cuDNN cannot reset state mid-sequence, so every (T, B) batch is cut at episode starts into N
// sub-sequences (policy/sequence_plan.h) laid out padded, time-major, (max_length, N):
//
//   x (T, B, in) --gather source_row--> x_pad (max_length, N, in) --cuDNN--> y_pad (.., N, H)
//   y_pad --gather padded_row--> y (T, B, H)
//   hx, cx (L, N, H): row n = env b's initial state when initial_row[n] = b, else zeros
//   final_state of env b: hy, cy row final_sub[b]
//
// Backward runs the same maps the other way (dy scattered into the padded layout with zeros in
// the padding, dhx/dcx rows gathered per initial_row). The cuDNN descriptor is built once per
// spec (float32 data and math, DOUBLE_BIAS, unidirectional, LINEAR_INPUT, PADDED_IO_ENABLED, no
// dropout, LSTM cell clip via cudnnRNNSetClip_v9 MINMAX [-clip, clip]); the opaque weight layout
// is asked of cuDNN gate by gate and checked (cudnn_weight_table.h, opaque_layout()).
//
// Weights and gradients, the host-span interface: parameters() and parameter_gradients() are
// host mirrors of the opaque weight space w and its gradient dw, in cuDNN's layout (gaps, if any,
// hold zeros). The host mirrors are the truth: forward() uploads the parameter mirror into w
// before running, so an optimizer may edit parameters() between calls; backward() uploads the
// gradient mirror into dw, lets cuDNN ADD this batch's gradients, and downloads dw into the
// mirror again. A device-resident optimizer (device_weights(), device_gradients(), layout(),
// stream()) switches to the device-resident mode below.
//
// Device-resident mode (set_device_resident(true), the CUDA learner): w and dw on the device are
// the truth. forward_device/backward_device take and give device pointers, enqueue on stream()
// and return without waiting (only the small host staging of the plan and the initial states is
// copied in, from one of two pinned slots used in turn; a call waits for the copies out of its
// slot, made two calls before, before rewriting them). Nothing is uploaded
// from or refreshed into the host mirrors; weights()/gradients()/parameters() read the device
// copies back when asked (a synchronizing download), and an optimizer updates device_weights()
// in place from device_gradients() on the same stream.
//
// Algorithms: STANDARD always works. With options.algo auto or persist_small_h the executor tries
// CUDNN_RNN_ALGO_PERSIST_STATIC_SMALL_H when a batch is eligible (all sub-sequences of one length;
// H <= 128 for LSTM/GRU, <= 256 for RNN, the backward limits) and falls back to STANDARD,
// remembered for that max_length and every N at least as large, when cuDNN refuses it (a
// NOT_SUPPORTED or BAD_PARAM status from the descriptor, size query, forward or backward; a
// backward refusal re-runs the forward with STANDARD first, since the reserve space belongs to the
// algorithm).
//
// The persistent kernels take no unequal lengths, and a learner's minibatch almost always has an
// episode start somewhere. So where no final state is asked for (the device path, always; a
// host-span forward with an empty final_state) and the persistent algorithm may run, cuDNN is
// told that every sub-sequence runs the full max_length: a cut one runs on past its end over the
// zero inputs of its padding. That is exact there. Real steps never read later ones, so y is
// unchanged; the padding's dy is zero and no gradient enters the final state, so every gradient
// through a padded step is zero and the real steps' backward (dx, the initial-state and weight
// gradients) is the cut one's (tests/policy/sequence_plan_test.cc runs this very computation on
// the CPU against resets inside the loop). Only hy and cy of a cut sub-sequence are wrong, and
// nothing reads them. The price is the padding's rows, max_length x N against T x B; STANDARD
// keeps the true lengths, and so does the ReLU RNN, whose unbounded state could overflow in the
// padding (0 x inf is NaN in the weight gradients); the gated cells' and tanh's states stay
// bounded.
//
// Low-precision data (options.data fp16 or bf16, device.cudnn_data): cuDNN runs on 16-bit data
// with float math (mathPrec FLOAT, CUDNN_TENSOR_OP_MATH), while everything above stays fp32: the
// master weights w and gradients dw (the optimizer's, in the fp32 descriptor's layout, which
// layout() and the converters see), x, y, states and their gradients. Each forward casts the
// padded x, hx, cx and w (through the fp32 -> 16-bit layout index: the two weight spaces are
// asked of cuDNN separately and never assumed alike) into 16-bit buffers, and y, hy, cy back;
// each backward casts the padded dy (times kFp16GradientScale for fp16: gradients of a mean over
// thousands of samples sit near fp16's smallest normal), zeroes a 16-bit dw, lets cuDNN write
// this batch's gradients there, and adds them, unscaled, into the fp32 dw (dx, dhx, dcx are cast
// back unscaled). A value past fp16's range becomes an infinity, which the learner's non-finite
// step guard skips. The casts are elementwise passes over data cuDNN reads anyway.
//
// Not thread-safe; one executor per thread. Every host-span call synchronizes its stream before
// returning; forward_device/backward_device do not.
#pragma once

#include <cudnn.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/cuda_memory.h"
#include "kernels/low_float.h"
#include "policy/convert/flat_layout.h"
#include "policy/cuda/device_sequence_executor.h"
#include "policy/cudnn/cudnn_handles.h"
#include "policy/gpu_executors.h"
#include "policy/sequence_plan.h"

namespace recur::policy {

class CudnnSequenceExecutor final : public DeviceSequenceExecutor {
 public:
  // stream: the CUDA stream every call is enqueued on (nullptr: one owned by the executor), so
  // that a learner can order the core with its own kernels without events.
  CudnnSequenceExecutor(const CoreSpec& spec, const CudnnSequenceOptions& options = {},
                        cudaStream_t stream = nullptr);
  ~CudnnSequenceExecutor() override;

  // Host mirrors; in device-resident mode a snapshot read back from the device (edits are lost).
  std::span<float> parameters() override {
    refresh_mirrors();
    return host_w_.span();
  }
  std::span<float> parameter_gradients() override {
    refresh_mirrors();
    return host_dw_.span();
  }
  const FlatLayout& parameter_layout() const override { return layout_; }

  // The device side (device_sequence_executor.h), for the device-resident optimizer (see the
  // header note).
  float* device_weights() override { return w_.data(); }
  const float* device_weights() const override { return w_.data(); }
  float* device_gradients() override { return dw_.data(); }
  const FlatLayout& layout() const override { return layout_; }
  cudaStream_t stream() const override {
    return external_stream_ ? external_stream_ : stream_.get();
  }

  void set_device_resident(bool on) override;
  bool device_resident() const override { return device_resident_; }
  // fp16 data only (bf16 and fp32 need no scale and ignore it).
  void set_gradient_scale(float scale) override;
  float gradient_scale() const { return gradient_scale_; }

  // What cudnnGetRNNWeightParams reported for the STANDARD descriptor (for tests and reports).
  const OpaqueTable& weight_table() const { return table_; }
  // The algorithm of the last forward's results: kStandard or kPersistSmallH (kStandard before
  // any forward, and after a backward that had to re-run the forward with STANDARD).
  RnnAlgo last_algo() const { return last_algo_; }
  // True when the last forward ran its cut sub-sequences on to max_length (see the header note).
  bool last_full_length() const { return full_length_; }
  const CudnnSequenceOptions& options() const { return options_; }

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
  // Device-resident mode: copies w/dw into the host mirrors (for weights()/gradients()).
  void refresh_mirrors() const;
  // Plans the batch, sets the descriptors, grows the buffers and uploads the index arrays and
  // hx/cx (host-mirror mode: the weights too); then the staged forward runs from device x into
  // device y, and the staged backward from device dy.
  // Initial states from the host span, or (device_states not null) gathered on the device.
  // full_length: no final state is wanted, so cut sub-sequences may run on to max_length when
  // the persistent algorithm may take the batch (see the header note).
  void stage_forward(int T, int B, std::span<const uint8_t> episode_start,
                     std::span<const float> initial_state, bool full_length,
                     const DeviceStateTable* device_states = nullptr);
  void run_staged_forward(const float* x, float* y);
  // want_state_grads: the host path's d_initial_state reads dhx, dcx (16-bit data: cast back).
  void run_staged_backward(const float* dy, float* dx, bool want_state_grads);
  // 16-bit data: the padded inputs, states and weights to cuDNN's copies; its y, hy, cy back;
  // after a backward its dx (when wanted), dhx, dcx back and its dw added into dw, unscaled.
  void cast_forward_inputs();
  void cast_forward_outputs();
  void cast_backward_outputs(bool want_dx, bool want_state_grads);
  // Sets `desc` for `algo` and data `type`; false when cuDNN refuses a persistent algo (other
  // errors throw).
  bool configure(const cudnn::RnnDescriptor& desc, cudnnRNNAlgo_t algo, cudnnDataType_t type);
  // Low-precision data: the 16-bit descriptor, weight space and layout index (constructor).
  void configure_low_precision();
  // A cuDNN call's status; with 16-bit data a failure also names device.cudnn_data.
  void check(cudnnStatus_t status, const char* call) const;
  // What cuDNN reads and writes: the fp32 buffer, or with 16-bit data its copy.
  void* io(kernels::DeviceBuffer<float>& f32, kernels::DeviceBuffer<uint16_t>& low) {
    return low_ ? static_cast<void*>(low.data()) : static_cast<void*>(f32.data());
  }
  void* cudnn_weights() { return low_ ? static_cast<void*>(w16_.data()) : w_.data(); }
  void* cudnn_gradients() { return low_ ? static_cast<void*>(dw16_.data()) : dw_.data(); }
  size_t cudnn_weight_bytes() const { return low_ ? low_weight_bytes_ : weight_bytes_; }
  bool persist_eligible() const;
  bool persist_refused(int max_length, int count) const;
  void refuse_persist(int max_length, int count, const char* where);
  // Sizes the temp spaces for the current data descriptors and runs cudnnRNNForward (TRAINING)
  // on the staged device inputs with `algo`. Returns false when the persistent descriptor is
  // refused (by the size query or the forward call); STANDARD errors throw.
  bool run_forward(RnnAlgo algo);
  cudnnRNNDescriptor_t descriptor(RnnAlgo algo) const;

  CudnnSequenceOptions options_;
  kernels::CudaStream stream_;  // used unless an external stream was given
  cudaStream_t external_stream_ = nullptr;
  bool device_resident_ = false;
  // Two staging slots in turn: each call's index arrays go up from its own pinned block, and
  // staged_[k] follows the last uploads out of slot k, so a call waits only for the call before
  // the previous one (the host plans a minibatch ahead of the GPU without a stall).
  kernels::CudaEvent staged_[2];
  int slot_ = 0;
  cudnn::Handle handle_;
  cudnn::NoDropoutDescriptor dropout_;
  cudnn::RnnDescriptor standard_;
  cudnn::RnnDescriptor persist_;
  bool persist_available_ = false;  // persist_ configured and with the same weight layout
  // (max_length, N) shapes cuDNN refused; each stands for every larger N at that max_length.
  std::vector<std::pair<int, int>> persist_refused_;

  // 16-bit data (see the header note): cuDNN's own descriptors (standard_, persist_) take the
  // 16-bit type and master_ (fp32, never run) gives the master weights' layout.
  bool low_ = false;
  kernels::LowFloat low_type_ = kernels::LowFloat::kBfloat16;
  cudnnDataType_t data_type_ = CUDNN_DATA_FLOAT;
  float gradient_scale_ = 1.0f;  // dy's scale before the cast (fp16); what comes back is unscaled
  cudnn::RnnDescriptor master_;
  size_t low_weight_bytes_ = 0;
  OpaqueTable low_table_;                       // standard_'s 16-bit weight space
  kernels::DeviceBuffer<int64_t> d_low_index_;  // (16-bit elements) master index, -1 = gap
  kernels::DeviceBuffer<uint16_t> w16_, dw16_;
  kernels::DeviceBuffer<uint16_t> x16_, y16_, hx16_, cx16_, hy16_, cy16_;  // cuDNN's copies of
  kernels::DeviceBuffer<uint16_t> dy16_, dx16_, dhx16_, dcx16_;            // the padded buffers

  size_t weight_bytes_ = 0;  // the fp32 (master) weight space
  OpaqueTable table_;
  FlatLayout layout_;
  kernels::DeviceBuffer<float> w_, dw_;  // (layout_.size) opaque weight space
  // Host mirrors (the truth, unless device-resident; then refreshed on demand).
  mutable kernels::PinnedBuffer<float> host_w_, host_dw_;

  // The last forward's plan, descriptors and device data (backward needs all of them intact).
  SequencePlan plan_;
  // The lengths cuDNN is given: plan_.lengths, or max_length for all when full_length_ (the cut
  // sub-sequences run on over their padding so that the persistent algorithm may take them).
  std::vector<int32_t> cudnn_lengths_;
  bool full_length_ = false;
  RnnAlgo last_algo_ = RnnAlgo::kStandard;
  bool have_forward_ = false;
  // cudnnRNNBackwardData overwrites the forward's activations in the reserve space with its own
  // intermediates (PyTorch: BackwardData "mutates reserve"). A second backward of the same
  // forward would differentiate garbage (the H100 run saw the second pass add ~nothing), so it
  // first re-runs the forward to restore the reserve space.
  bool reserve_spent_ = false;
  cudnn::RnnDataDescriptor x_desc_, y_desc_;
  cudnn::TensorDescriptor h_desc_;  // (L, N, H), for h and c
  size_t work_bytes_ = 0, reserve_bytes_ = 0;
  kernels::DeviceBuffer<unsigned char> work_, reserve_;
  kernels::DeviceBuffer<int32_t> d_lengths_;     // (N) devSeqLengths
  kernels::DeviceBuffer<int32_t> d_padded_row_;  // (T * B)
  kernels::DeviceBuffer<int32_t> d_source_row_;  // (max_length * N)
  kernels::DeviceBuffer<int32_t> d_state_row_;   // (N) table row of sub-sequence n, -1 = zeros
  kernels::DeviceBuffer<float> d_x_, d_x_pad_;   // (T, B, in), (max_length, N, in)
  kernels::DeviceBuffer<float> d_y_, d_y_pad_;   // (T, B, H), (max_length, N, H)
  kernels::DeviceBuffer<float> d_hx_, d_cx_, d_hy_, d_cy_;  // (L, N, H); c only for LSTM
  kernels::DeviceBuffer<float> d_dy_pad_, d_dx_pad_;        // (max_length, N, H | in)
  kernels::DeviceBuffer<float> d_dhx_, d_dcx_;              // (L, N, H)
  // Host staging (pinned, grown with reserve()): x or dx, y or dy, the index arrays, h/c states.
  kernels::PinnedBuffer<float> pin_in_, pin_out_, pin_state_;
  kernels::PinnedBuffer<int32_t> pin_index_[2];  // per staging slot
};

}  // namespace recur::policy
