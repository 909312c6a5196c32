// The learner's whole network on one GPU: PolicyLearner's evaluate/backward (policy_learner.h)
// with every buffer in device memory and every operation on ONE stream, so that a PPO minibatch
// (agent/ppo/cuda_engine.cc) runs start to finish without the host touching a tensor.
//
//   obs (T, B, obs) device ─ per tower: encoder  CudaTrainMlp  (T*B, obs) -> (T*B, F)
//                                       core     device-resident  (T, B, F) -> y (T, B, H): cuDNN's
//                                                RNN, or the fused kernels for lstm_ln and mingru
//                                                (device_sequence_executor.h)
//   actor y  ─ actor head  CudaTrainMlp -> logits|mean (T*B, A) ─ distribution_eval -> log_probs,
//                                                                                     entropies
//   critic y ─ critic head CudaTrainMlp -> values (T*B)
//
// backward(d_log_probs, d_entropies, d_values) runs the same chain back (distribution backward,
// heads, the two head gradients summed when the core is shared, cuDNN backward data + weights,
// encoders) and ADDS every parameter gradient, as PolicyLearner. episode_start (T, B) comes from
// the host: it shapes cuDNN's sub-sequence plan (policy/sequence_plan.h), which is host work
// anyway. The initial states come from the host (B, state_size), or stay on the device in a
// table the PPO engine uploads once per update (the second evaluate overload).
//
// Parameters live where the optimizer updates them: each MLP in one device buffer of Mlp's flat
// layout, each core in its executor's weight space (cuDNN's opaque one, or canonical for the
// fused kernels; device-resident mode), log_std in its own
// buffer. parameter_groups() lists them with the same names and order as
// PolicyLearner::parameter_groups(), so optimizer state is interchangeable. load()/to_tensors()
// go through canonical tensors (host staging), for checkpoints and for actors elsewhere.
//
// Threading: one thread; every call makes the device current. Calls enqueue on stream() and do
// not wait unless they say so. With options.tower_streams 2 and two towers, the critic's encoder
// and core run on a second stream: evaluate forks it from stream() after the inputs and joins it
// before the critic head; backward forks it after the heads and joins it before returning; so
// to a caller everything still happens on stream(), in order.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kernels/cuda_memory.h"
#include "policy/aligned.h"
#include "policy/convert/flat_layout.h"
#include "policy/cuda/cublas_handle.h"
#include "policy/cuda/cuda_train_mlp.h"
#include "policy/cuda/device_sequence_executor.h"
#include "policy/cuda/side_stream.h"
#include "policy/gpu_executors.h"
#include "policy/mlp.h"
#include "policy/policy_spec.h"
#include "policy/stage_marker.h"

namespace recur::policy {

class CudaPolicyLearner {
 public:
  CudaPolicyLearner(const PolicySpec& spec, const CudnnSequenceOptions& options);
  ~CudaPolicyLearner();  // waits for the stream
  CudaPolicyLearner(const CudaPolicyLearner&) = delete;
  CudaPolicyLearner& operator=(const CudaPolicyLearner&) = delete;

  const PolicySpec& spec() const { return spec_; }
  int device() const { return options_.device; }
  cudaStream_t stream() const { return stream_.get(); }

  // Parameters from canonical tensors (obs_norm.* ignored) and back; both wait for the copies.
  void load(const TensorMap& tensors);
  TensorMap to_tensors() const;
  TensorMap gradient_tensors() const;

  // obs (T, B, obs_dim) normalized and actions (T, B, action floats): device. episode_start
  // (T, B) and initial_state (B, spec.state_size()): host. log_probs, entropies, values (T, B):
  // device, written. obs and actions must stay unchanged until backward().
  void evaluate(int T, int B, const float* obs, const float* actions,
                std::span<const uint8_t> episode_start, std::span<const float> initial_state,
                float* log_probs, float* entropies, float* values);
  // The same with the initial states kept on the device: slot b starts from the policy state
  // (spec.state_size() floats, [actor core | critic core]) at state_table + table_rows[b] *
  // table_stride. state_table: device, read when the stream gets there; table_rows: host (B).
  // Each tower's core executor gathers its part with one kernel (no host copies).
  void evaluate(int T, int B, const float* obs, const float* actions,
                std::span<const uint8_t> episode_start, const float* state_table,
                size_t table_stride, std::span<const int32_t> table_rows, float* log_probs,
                float* entropies, float* values);
  // Gradients of the loss w.r.t. the last evaluate's outputs (T, B) each, device; ADDED.
  void backward(const float* d_log_probs, const float* d_entropies, const float* d_values);
  void zero_gradients();
  // Every core's DeviceSequenceExecutor::set_gradient_scale (device.cudnn_data: fp16).
  void set_gradient_scale(float scale);

  // Profiling only (`recur bench devices --stages`): marks the stage boundaries of evaluate and
  // backward on `marker` (null: off).
  void set_stage_marker(StageMarker* marker) { marker_ = marker; }
  void mark(const char* stage) const {
    if (marker_) marker_->mark(stage, stream_.get());
  }
  // A tower's stage: marked on stream() only where the tower runs on it (with two streams the
  // critic's stages overlap the actor's and end at the join's mark).
  void mark_tower(int c, const char* stage) const {
    if (c == 0 || !two_streams()) mark(stage);
  }

  struct Group {
    std::string name;  // as PolicyLearner::parameter_groups()
    float* values;     // device
    float* grads;      // device, same layout
    size_t size;
    const FlatLayout* layout;  // the core's opaque layout; null for MLPs and log_std
  };
  std::vector<Group> parameter_groups();

  // Where the actor-facing parameters sit, for a device-to-device publish (tower c = 0 actor,
  // 1 critic; null where absent).
  const float* encoder_parameters(int tower) const;
  const float* core_weights(int tower) const;
  const FlatLayout* core_layout(int tower) const;
  const float* actor_head_parameters() const { return actor_head_->params(); }
  const float* critic_head_parameters() const { return critic_head_->params(); }
  const float* log_std() const { return log_std_.size() ? log_std_.data() : nullptr; }

 private:
  struct Tower {
    std::unique_ptr<CudaTrainMlp> encoder;
    std::unique_ptr<DeviceSequenceExecutor> core;
    kernels::DeviceBuffer<float> y, d_y, d_features;  // (T*B, H), (T*B, H), (T*B, F)
    AlignedVector<float> state0;                      // host (B, core state)
  };
  void activate() const;
  bool two_streams() const { return towers() == 2 && options_.tower_streams == 2; }
  // Where tower c's encoder and core run: the critic's own stream and cuBLAS handle, or stream().
  cudaStream_t tower_stream(int c) const {
    return c == 1 && critic_ ? critic_->get() : stream_.get();
  }
  cublasHandle_t tower_cublas(int c) const {
    return c == 1 && critic_ ? critic_->cublas() : cublas_->get();
  }
  // stream() -> the critic's stream (fork) or back (join); nothing when one stream.
  void fork() {
    if (critic_) critic_->fork_from(stream_.get());
  }
  void join() {
    if (critic_) critic_->join_into(stream_.get());
  }
  // evaluate's body: the states from `initial_state` (host), or from `device_states` when not
  // null (its table pointing at the policy state; each tower offsets it to its core's part).
  void evaluate_impl(int T, int B, const float* obs, const float* actions,
                     std::span<const uint8_t> episode_start, std::span<const float> initial_state,
                     const DeviceSequenceExecutor::DeviceStateTable* device_states,
                     float* log_probs, float* entropies, float* values);
  TensorMap collect(bool gradients) const;
  int towers() const { return spec_.shared_core ? 1 : 2; }

  PolicySpec spec_;
  CudnnSequenceOptions options_;
  kernels::CudaStream stream_;
  std::unique_ptr<CublasHandle> cublas_;
  std::unique_ptr<SideStream> critic_;  // device.tower_streams 2 with two towers

  Tower tower_[2];
  std::unique_ptr<CudaTrainMlp> actor_head_, critic_head_;
  kernels::DeviceBuffer<float> log_std_, log_std_grad_;  // (action_dim), continuous only
  kernels::DeviceBuffer<float> d_head_;                  // (T*B, A)
  kernels::DeviceBuffer<float> d_y_value_;               // (T*B, H) shared core: critic head's
  kernels::DeviceBuffer<double> scratch_;                // reductions (kernels/reduction.h)
  // The last evaluate's shape and inputs (device pointers owned by the caller).
  StageMarker* marker_ = nullptr;
  int t_ = 0, b_ = 0;
  const float* actions_ = nullptr;
  const float* head_out_ = nullptr;  // the actor head's output (T*B, A), owned by actor_head_

  // Host staging for load/to_tensors (same specs as the device parts).
  mutable std::unique_ptr<Mlp> host_encoders_[2];
  mutable Mlp host_actor_head_, host_critic_head_;
  mutable AlignedVector<float> host_log_std_;
};

}  // namespace recur::policy
