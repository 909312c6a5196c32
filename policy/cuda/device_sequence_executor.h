// The GPU learner's view of a sequence executor: the host-span SequenceExecutor plus a
// device-resident mode in which the weights and gradients live on the device, inputs and outputs
// are device pointers and every call is enqueued on stream() without waiting. Two executors
// implement it: cuDNN's RNN (policy/cudnn/cudnn_sequence_executor.h: LSTM, GRU, RNN) and recur's
// fused kernels (policy/cuda/cuda_sequence_executor.h: lstm_ln, mingru); make_device_sequence()
// picks by cell, so the CUDA learner (cuda_policy_learner.h) runs every core the same way.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "policy/convert/flat_layout.h"
#include "policy/executor.h"
#include "policy/gpu_executors.h"

namespace recur::policy {

class DeviceSequenceExecutor : public SequenceExecutor {
 public:
  // Initial states kept on the device: env b of the batch starts from the state at
  // table + rows[b] * stride ([h of layers | c of layers], S floats; stride >= S). table: device,
  // read when the stream gets there; rows: host (B). A learner keeps the rollout's stored states
  // there once per update, and one kernel (kernels/state_gather.h) assembles the initial states
  // per batch, in place of host copies.
  struct DeviceStateTable {
    const float* table = nullptr;
    size_t stride = 0;
    std::span<const int32_t> rows;
  };

  // The device copies of the parameters and their gradients, in layout()'s order.
  virtual float* device_weights() = 0;
  virtual const float* device_weights() const = 0;
  virtual float* device_gradients() = 0;
  virtual const FlatLayout& layout() const = 0;
  virtual cudaStream_t stream() const = 0;

  // 16-bit gradients (cuDNN on fp16 data): the power of two >= 1 the backward multiplies dy by
  // before the cast and divides out of every gradient after it (agent/ppo/loss_scale.h adapts
  // it). Takes effect from the next backward; executors on fp32 or bf16 data ignore it.
  virtual void set_gradient_scale(float /*scale*/) {}

  // Device-resident mode; choose it before the first forward.
  virtual void set_device_resident(bool on) = 0;
  virtual bool device_resident() const = 0;
  // x (T, B, input) and y (T, B, H) device; episode_start (T, B) and initial_state (B, S) host.
  // Enqueued on stream(); y is ready when the stream gets there. These check their arguments
  // once (recur::Error naming the bad one) and call the backend's *_impl hook.
  void forward_device(int T, int B, const float* x, std::span<const uint8_t> episode_start,
                      std::span<const float> initial_state, float* y);
  void forward_device(int T, int B, const float* x, std::span<const uint8_t> episode_start,
                      const DeviceStateTable& initial_states, float* y);
  // Backward of the last forward_device: dy (T, B, H) device; dx (T, B, input) device written
  // unless nullptr; gradients ADDED into device_gradients(). No d_initial_state (PPO does not
  // train the stored states). Enqueued on stream().
  void backward_device(const float* dy, float* dx);

 protected:
  explicit DeviceSequenceExecutor(const CoreSpec& spec) : SequenceExecutor(spec) {}
  // Exactly one of initial_state (host) and table (device) is given.
  virtual void forward_device_impl(int T, int B, const float* x,
                                   std::span<const uint8_t> episode_start,
                                   std::span<const float> initial_state,
                                   const DeviceStateTable* table, float* y) = 0;
  // Throws when there is no complete forward to differentiate.
  virtual void backward_device_impl(const float* dy, float* dx) = 0;

 private:
  void check_device_call(int T, int B, const float* x, const float* y,
                         std::span<const uint8_t> episode_start) const;
};

// cuDNN's executor for the cells it has, recur's fused CUDA executor for lstm_ln and mingru; both
// on `stream` (nullptr: their own). options.math and options.algo are cuDNN's: the fused kernels
// always run fp32 without TF32 (cuBLAS's default math), whatever they say.
std::unique_ptr<DeviceSequenceExecutor> make_device_sequence(const CoreSpec& spec,
                                                             const CudnnSequenceOptions& options,
                                                             cudaStream_t stream = nullptr);

}  // namespace recur::policy
