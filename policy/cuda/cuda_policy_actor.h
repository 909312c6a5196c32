// The CUDA policy actor: PolicyActor's whole step (encoder -> core -> heads -> action sampling,
// log-prob, value) on one GPU and one stream, enqueued as one sequence and, with
// options.use_graph, replayed as ONE CUDA graph per step. PolicyActor (policy_actor.h) delegates
// to it when placed on Device::kCuda; it is not used directly elsewhere.
//
// One act(), all on the actor's stream:
//
//   pinned input block --one H2D copy--> device input block
//       [ nobs (B, obs) float | episode_start (B) u8 | pad | seed u64 | deterministic u32 ]
//   per tower (actor; critic too when cores are separate):
//       encoder MLP: per layer SGEMM + bias_activation     (B, obs) -> (B, F)
//       core (CudaCore): prepare (x in, resets), per layer SGEMM + cell_gates  (B, F) -> h (B, H)
//   actor head MLP on the actor's h -> (B, A); categorical, Gaussian or tanh-squashed kernel
//       (kernels/action_heads.h) -> actions, log-probs
//   critic head MLP on the critic's h -> values
//   (options.tower_streams 2 with separate cores: the critic's tower runs on a second stream,
//   forked by an event after the input copy and joined before the critic head: a parallel
//   branch of the captured graph)
//   device output block --one D2H copy--> pinned output block
//       [ actions (B, action floats) | log_probs (B) | values (B) ]
//   the host waits for the stream and copies the outputs out.
//
// With options.io = StepIo::kMapped (kernels/mapped_io.h) the two host blocks are mapped pinned
// memory instead: a fetch kernel replaces the H2D copy, an emit kernel the D2H copy and writes
// the step's sequence number (it travels in the input block) into a mapped flag, on which the
// host spins instead of synchronizing the stream. Same compute kernels, so the same values bit
// for bit (a GPU test says so).
//
// Observations are uploaded NORMALIZED: PolicyActor keeps the normalizer on the host (the actor
// loop updates it there every step and the learner replays PolicyActor::normalized_obs()), so it
// normalizes on the host as it does for the CPU path and hands the result here. That makes
// normalized_obs() exact by construction, needs no second copy of the statistics on the device
// and no device kernel that would have to match the host's rounding bit for bit; the host work is
// B x obs subtract-multiply-clip, negligible next to the env step that produced the obs.
//
// Sampling: the host Rng gives one next_u64() per sampled act() (none for a deterministic one, as
// the CPU's mode() draws nothing), which seeds Philox on the device (kernels/action_heads.h):
// runs are reproducible from the Rng's seed. The seed and the deterministic flag travel in the
// input block, so one graph serves sampled and deterministic steps.
//
// peek_values(): the same input block; the whole state buffer is saved by one D2D copy, the
// critic's path (the actor's tower when the core is shared) runs, its h gives the values, and the
// state is restored by one D2D copy: a second graph, captured like the first.
//
// State: every core's state image (cuda_core.h) lives in ONE device buffer, so get_states and
// set_states are one bulk copy each way through a pinned mirror, rearranged on the host into
// PolicyActor's (B, state_size) layout: per slot the actor core's state (h of every layer, then c
// of every layer for LSTM), then the critic core's when separate.
//
// Graphs: the first act (and the first peek) run the plain path, so that cuBLAS and the lazy
// module loader do their first-call work outside capture; the same sequence is captured right
// after and replayed from then on. Every buffer is allocated in the constructor at a fixed
// address: loads rewrite weights in place, state access uses plain copies on the same stream
// outside the graphs, and acting allocates nothing.
//
// Threading and devices: one thread at a time. Each public call first makes options.device the
// calling thread's current device (and leaves it so).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/rng.h"
#include "kernels/cuda_memory.h"
#include "policy/aligned.h"
#include "policy/cuda/cublas_handle.h"
#include "policy/cuda/cuda_core.h"
#include "policy/cuda/cuda_mlp.h"
#include "policy/cuda/side_stream.h"
#include "policy/gpu_executors.h"
#include "policy/mlp.h"
#include "policy/policy_spec.h"
#include "policy/stage_marker.h"

namespace recur::policy {

class CudaPolicyActor {
 public:
  CudaPolicyActor(const PolicySpec& spec, int slots, const CudaStepOptions& options);
  ~CudaPolicyActor();  // waits for the stream
  CudaPolicyActor(const CudaPolicyActor&) = delete;
  CudaPolicyActor& operator=(const CudaPolicyActor&) = delete;

  const PolicySpec& spec() const { return spec_; }
  int slots() const { return slots_; }

  // The network's parameters by their canonical names (as PolicyActor::load_weights).
  void load_weights(const TensorMap& tensors);

  // The network's parameters straight from device memory of this actor's GPU (the CUDA
  // learner's publish, agent/ppo/cuda_engine.cc): MLPs and log_std in their own flat
  // layouts (copied as they are), each core's weights in core_layout[c] (gathered into the step
  // layout with the converter's index, built once per source layout). Waits for `stream` (the
  // source's) before reading and for its own copies before returning. Tower c = 1 only for
  // separate cores; encoder[c] null without an encoder, log_std null for a discrete or squashed
  // policy (has_log_std).
  struct DeviceParameters {
    const float* encoder[2] = {nullptr, nullptr};
    const float* core[2] = {nullptr, nullptr};
    const FlatLayout* core_layout[2] = {nullptr, nullptr};
    const float* actor_head = nullptr;
    const float* critic_head = nullptr;
    const float* log_std = nullptr;
    cudaStream_t stream = nullptr;
  };
  void load_weights_device(const DeviceParameters& params);
  int device() const { return device_; }

  // nobs (B, obs_dim) NORMALIZED observations; the rest as PolicyActor::act.
  void act(std::span<const float> nobs, std::span<const uint8_t> episode_start, Rng& rng,
           bool deterministic, std::span<float> actions, std::span<float> log_probs,
           std::span<float> values);
  // nobs normalized; as PolicyActor::peek_values (no state changes).
  void peek_values(std::span<const float> nobs, std::span<const uint8_t> episode_start,
                   std::span<float> values);

  // (B, spec.state_size()) as PolicyActor.
  void get_states(std::span<float> out) const;
  void set_states(std::span<const float> states);
  void reset(int slot);

  // Profiling only (`recur bench devices --stages`): marks every stage boundary of act and
  // peek_values on `marker` (null: off). Needs options.use_graph false: a replayed graph has no
  // boundaries the host could mark.
  void set_stage_marker(StageMarker* marker);

 private:
  struct Tower {
    std::unique_ptr<CudaMlp> encoder;  // null when the spec has no encoder
    std::unique_ptr<CudaCore> core;
    kernels::DeviceBuffer<float> features;  // (B, feature_dim); empty without an encoder
    kernels::DeviceBuffer<float> h;         // (B, H) the core's output
  };
  struct InputLayout {  // byte offsets in the input block
    size_t obs = 0, starts = 0, seed = 0, deterministic = 0, sequence = 0, bytes = 0;
  };
  struct OutputLayout {  // float offsets in the output block
    size_t actions = 0, log_probs = 0, values = 0, floats = 0;
  };

  void activate() const;
  bool mapped() const { return options_.io == StepIo::kMapped; }
  void mark(const char* stage, cudaStream_t s) const {
    if (marker_) marker_->mark(stage, s);
  }
  // Fills the host input block (a sampled step's seed too, and the next sequence number).
  void stage_inputs(std::span<const float> nobs, std::span<const uint8_t> episode_start,
                    uint64_t seed, bool deterministic);
  // Enqueues obs -> h of one tower on `s` with the cuBLAS handle bound to it, reading the device
  // input block; stage marks unless `marks` is false (a tower on the critic's own stream).
  void enqueue_tower(Tower& t, cudaStream_t s, cublasHandle_t cublas, bool marks = true);
  bool two_streams() const { return !spec_.shared_core && options_.tower_streams == 2; }
  // The two enqueue sequences, as captured by the graphs.
  void record_act(cudaStream_t s);
  void record_peek(cudaStream_t s);
  // The input block's upload and the outputs' download (floats [first, first + n) of the output
  // block) as the I/O mode does them (see the header note).
  void enqueue_fetch(cudaStream_t s);
  void enqueue_emit(size_t first, size_t n, cudaStream_t s);
  // Replays `graph`, or runs `record` and captures it into `graph` after the first plain run;
  // returns when the outputs are in the host output block.
  template <typename Record>
  void run(kernels::CudaGraph& graph, bool& pending, Record record);

  PolicySpec spec_;
  int slots_;
  CudaStepOptions options_;
  int device_;  // set current before any allocation below
  int action_floats_;
  InputLayout in_;
  OutputLayout out_;

  kernels::CudaStream stream_;  // declared before the handle: destroyed after it
  std::unique_ptr<CublasHandle> cublas_;
  std::unique_ptr<SideStream> critic_;  // options.tower_streams 2 with separate cores

  // Host staging of the parameters (load_network fills them; then they are uploaded).
  std::unique_ptr<Mlp> host_encoders_[2];
  Mlp host_actor_head_, host_critic_head_;
  AlignedVector<float> host_log_std_;

  kernels::DeviceBuffer<float> state_;               // every core's state image, actor's first
  kernels::DeviceBuffer<float> saved_state_;         // peek_values' save/restore copy of state_
  mutable kernels::PinnedBuffer<float> state_host_;  // pinned mirror of state_
  Tower towers_[2];                                  // [1] used only with separate cores
  std::unique_ptr<CudaMlp> actor_head_, critic_head_;
  kernels::DeviceBuffer<float> log_std_;   // (action_dim) continuous only
  kernels::DeviceBuffer<float> head_out_;  // (B, actor head width) logits, means (, raw log-stds)
  kernels::DeviceBuffer<float> box_;       // (2, action_dim) [low | high]; squashed actors only

  // I/O blocks: pinned (copy) or mapped (mapped) host blocks, and their device twins.
  kernels::PinnedBuffer<unsigned char> in_host_;
  kernels::DeviceBuffer<unsigned char> in_dev_;
  kernels::PinnedBuffer<float> out_host_;
  kernels::DeviceBuffer<float> out_dev_;
  kernels::MappedBuffer<unsigned char> in_mapped_;
  kernels::MappedBuffer<float> out_mapped_;
  kernels::MappedBuffer<uint32_t> flag_;              // mapped: the last finished sequence number
  kernels::DeviceBuffer<unsigned int> emit_counter_;  // mapped: launch_emit's block count
  uint32_t sequence_ = 0;  // of the last staged step; never 0 once staged

  // load_weights_device's conversion index per core (source layout -> step layout).
  struct Conversion {
    int64_t source_size = -1;
    std::vector<int64_t> source_position;
    kernels::DeviceBuffer<int64_t> index;
  };
  Conversion conversion_[2];

  StageMarker* marker_ = nullptr;
  kernels::CudaGraph act_graph_, peek_graph_;
  bool act_pending_ = false, peek_pending_ = false;  // use_graph and not yet captured
};

}  // namespace recur::policy
