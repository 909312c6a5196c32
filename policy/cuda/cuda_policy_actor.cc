// The CUDA policy actor's host side: buffers, the enqueue sequences of act and peek_values, the
// graphs and state access. The design is drawn in cuda_policy_actor.h.
#include "policy/cuda/cuda_policy_actor.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "kernels/action_heads.h"
#include "kernels/gather.h"
#include "kernels/mapped_io.h"

namespace recur::policy {
namespace {

// cuBLAS's recommended workspace for Hopper, preallocated so that neither a step nor its graph
// capture makes cuBLAS allocate (as in CudaStepExecutor).
constexpr size_t kCublasWorkspaceBytes = size_t{32} << 20;

int use_device(int device) {
  RECUR_CHECK_ARG(device >= 0, "CudaPolicyActor: device {} is not a CUDA device ordinal", device);
  CUDA_CHECK(cudaSetDevice(device));
  return device;
}

size_t round_up(size_t n, size_t to) {
  return (n + to - 1) / to * to;
}

size_t floats(int a, int b) {
  return static_cast<size_t>(a) * static_cast<size_t>(b);
}

}  // namespace

CudaPolicyActor::CudaPolicyActor(const PolicySpec& spec, int slots, const CudaStepOptions& options)
    : spec_(spec),
      slots_(slots),
      options_(options),
      device_(use_device(options.device)),
      action_floats_(spec.action_width()),
      host_actor_head_(spec.actor_head_spec()),
      host_critic_head_(spec.critic_head_spec()) {
  spec.validate();
  RECUR_CHECK_ARG(slots >= 1, "CudaPolicyActor needs at least one slot, got {}", slots);
  const int B = slots;
  const cudaStream_t s = stream_.get();

  RECUR_CHECK_ARG(options.tower_streams == 1 || options.tower_streams == 2,
                  "CudaPolicyActor: tower_streams {} must be 1 or 2", options.tower_streams);
  cublas_ = std::make_unique<CublasHandle>(s, kCublasWorkspaceBytes);
  if (two_streams()) critic_ = std::make_unique<SideStream>(kCublasWorkspaceBytes);

  // Input block (bytes) and output block (floats).
  in_.obs = 0;
  in_.starts = sizeof(float) * floats(B, spec.obs_dim);
  in_.seed = round_up(in_.starts + static_cast<size_t>(B), alignof(uint64_t));
  in_.deterministic = in_.seed + sizeof(uint64_t);
  in_.sequence = in_.deterministic + sizeof(uint32_t);
  in_.bytes = round_up(in_.sequence + sizeof(uint32_t), 16);  // the fetch kernel's word
  out_.actions = 0;
  out_.log_probs = floats(B, action_floats_);
  out_.values = out_.log_probs + static_cast<size_t>(B);
  out_.floats = out_.values + static_cast<size_t>(B);
  if (mapped()) {
    in_mapped_.resize(in_.bytes);  // zeroed
    out_mapped_.resize(out_.floats);
    flag_.resize(1);
    emit_counter_.resize(1);
    emit_counter_.zero(s);
  } else {
    in_host_.resize(in_.bytes);
    std::memset(in_host_.data(), 0, in_.bytes);
    out_host_.resize(out_.floats);
  }
  in_dev_.resize(in_.bytes);
  out_dev_.resize(out_.floats);
  in_dev_.zero(s);
  out_dev_.zero(s);

  // All cores' state in one buffer: zeros are the initial state.
  const int cores = spec.shared_core ? 1 : 2;
  const size_t core_floats = CudaCore::state_floats(spec.core_spec(), B);
  state_.resize(core_floats * static_cast<size_t>(cores));
  saved_state_.resize(state_.size());
  state_host_.resize(state_.size());
  state_.zero(s);
  saved_state_.zero(s);

  for (int c = 0; c < cores; ++c) {
    Tower& t = towers_[c];
    if (!spec.encoder.empty()) {
      t.encoder = std::make_unique<CudaMlp>(spec.encoder_spec(), B, s);
      t.features.resize(floats(B, spec.feature_dim()));
      t.features.zero(s);
      host_encoders_[c] = std::make_unique<Mlp>(spec.encoder_spec());
    }
    t.core = std::make_unique<CudaCore>(spec.core_spec(), B,
                                        state_.data() + core_floats * static_cast<size_t>(c), s);
    t.h.resize(floats(B, spec.hidden));
    t.h.zero(s);
  }
  actor_head_ = std::make_unique<CudaMlp>(spec.actor_head_spec(), B, s);
  critic_head_ = std::make_unique<CudaMlp>(spec.critic_head_spec(), B, s);
  head_out_.resize(floats(B, squash_head_width(spec.squash, spec.action_dim)));
  head_out_.zero(s);
  if (spec.squash != Squash::kNone) {  // the Box, fixed by the spec: uploaded once
    box_.resize(2 * static_cast<size_t>(spec.action_dim));
    box_.upload(spec_.action_low, s);
    box_.upload(spec_.action_high, s, spec_.action_low.size());
  }
  host_log_std_.assign(static_cast<size_t>(spec.action_dim), 0.0f);
  log_std_.resize(static_cast<size_t>(spec.action_dim));
  log_std_.zero(s);
  stream_.synchronize();
  act_pending_ = peek_pending_ = options.use_graph;
}

CudaPolicyActor::~CudaPolicyActor() {
  // Nothing may still run on buffers about to be freed; errors cannot be reported here.
  static_cast<void>(cudaSetDevice(device_));
  static_cast<void>(cudaStreamSynchronize(stream_.get()));
  if (critic_) static_cast<void>(cudaStreamSynchronize(critic_->get()));
}

void CudaPolicyActor::activate() const {
  CUDA_CHECK(cudaSetDevice(device_));
}

void CudaPolicyActor::load_weights(const TensorMap& tensors) {
  activate();
  Mlp* const encoders[2] = {host_encoders_[0].get(), host_encoders_[1].get()};
  CudaCore* const cores[2] = {towers_[0].core.get(), towers_[1].core.get()};
  load_network(spec_, tensors, encoders, cores, host_actor_head_, host_critic_head_, host_log_std_);
  const cudaStream_t s = stream_.get();
  for (int c = 0; c < 2; ++c)
    if (towers_[c].encoder) towers_[c].encoder->upload(*host_encoders_[c], s);
  actor_head_->upload(host_actor_head_, s);
  critic_head_->upload(host_critic_head_, s);
  log_std_.upload(host_log_std_, s);
  stream_.synchronize();
}

void CudaPolicyActor::load_weights_device(const DeviceParameters& p) {
  activate();
  const cudaStream_t s = stream_.get();
  // The source is complete once its stream's queued work is (the learner's Adam step).
  CUDA_CHECK(cudaStreamSynchronize(p.stream));
  auto copy = [&](float* dst, const float* src, size_t n) {
    RECUR_CHECK_ARG(src != nullptr, "load_weights_device: a source buffer is missing");
    CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof(float), cudaMemcpyDeviceToDevice, s));
  };
  const int cores = spec_.shared_core ? 1 : 2;
  for (int c = 0; c < cores; ++c) {
    Tower& t = towers_[c];
    if (t.encoder) copy(t.encoder->parameters(), p.encoder[c], t.encoder->num_parameters());
    RECUR_CHECK_ARG(p.core[c] != nullptr && p.core_layout[c] != nullptr,
                    "load_weights_device: core {} has no source", c);
    const FlatLayout& from = *p.core_layout[c];
    const FlatLayout& to = t.core->layout();
    RECUR_CHECK_ARG(from.position.size() == to.position.size(),
                    "load_weights_device: the '{}' layout places {} canonical weights, this core "
                    "has {}",
                    from.name, from.position.size(), to.position.size());
    Conversion& conv = conversion_[c];
    if (conv.source_size != from.size || conv.source_position != from.position) {
      const std::vector<int64_t> index = conversion_index(from, to);
      conv.index.resize(index.size());
      conv.index.upload(index, s);
      CUDA_CHECK(cudaStreamSynchronize(s));  // `index` is pageable and about to go
      conv.source_size = from.size;
      conv.source_position = from.position;
    }
    kernels::launch_gather(p.core[c], t.core->weights(), conv.index.data(),
                           static_cast<size_t>(to.size), s);
  }
  copy(actor_head_->parameters(), p.actor_head, actor_head_->num_parameters());
  copy(critic_head_->parameters(), p.critic_head, critic_head_->num_parameters());
  if (has_log_std(spec_)) copy(log_std_.data(), p.log_std, log_std_.size());
  stream_.synchronize();
}

void CudaPolicyActor::stage_inputs(std::span<const float> nobs,
                                   std::span<const uint8_t> episode_start, uint64_t seed,
                                   bool deterministic) {
  unsigned char* block = mapped() ? in_mapped_.data() : in_host_.data();
  if (++sequence_ == 0) sequence_ = 1;  // 0 is the flag's initial value: never expected
  std::memcpy(block + in_.sequence, &sequence_, sizeof sequence_);
  std::memcpy(block + in_.obs, nobs.data(), nobs.size_bytes());
  std::memcpy(block + in_.starts, episode_start.data(), episode_start.size_bytes());
  std::memcpy(block + in_.seed, &seed, sizeof seed);
  const uint32_t flag = deterministic ? 1u : 0u;
  std::memcpy(block + in_.deterministic, &flag, sizeof flag);
}

void CudaPolicyActor::set_stage_marker(StageMarker* marker) {
  RECUR_CHECK_ARG(marker == nullptr || !options_.use_graph,
                  "set_stage_marker: stage marks need plain launches (use_graph false)");
  marker_ = marker;
}

void CudaPolicyActor::enqueue_tower(Tower& t, cudaStream_t s, cublasHandle_t cublas, bool marks) {
  const auto* obs = reinterpret_cast<const float*>(in_dev_.data() + in_.obs);  // (B, obs)
  const uint8_t* starts = in_dev_.data() + in_.starts;                         // (B)
  const float* x = obs;
  const bool actor = &t == &towers_[0];
  if (t.encoder) {
    t.encoder->enqueue(cublas, obs, t.features.data(), s);
    x = t.features.data();
    if (marks) mark(actor ? "actor encoder" : "critic encoder", s);
  }
  t.core->enqueue(cublas, x, starts, t.h.data(), s);
  if (marks) mark(actor ? "actor core" : "critic core", s);
}

void CudaPolicyActor::enqueue_fetch(cudaStream_t s) {
  if (mapped())
    kernels::launch_fetch(in_mapped_.device(), in_dev_.data(), in_.bytes, s);
  else
    CUDA_CHECK(
        cudaMemcpyAsync(in_dev_.data(), in_host_.data(), in_.bytes, cudaMemcpyHostToDevice, s));
}

void CudaPolicyActor::enqueue_emit(size_t first, size_t n, cudaStream_t s) {
  if (!mapped()) {
    CUDA_CHECK(cudaMemcpyAsync(out_host_.data() + first, out_dev_.data() + first, sizeof(float) * n,
                               cudaMemcpyDeviceToHost, s));
    return;
  }
  kernels::EmitArgs e;
  e.src = out_dev_.data() + first;
  e.dst = out_mapped_.device() + first;
  e.n = n;
  e.seq = reinterpret_cast<const uint32_t*>(in_dev_.data() + in_.sequence);
  e.flag = flag_.device();
  e.counter = emit_counter_.data();
  kernels::launch_emit(e, s);
}

void CudaPolicyActor::record_act(cudaStream_t s) {
  RECUR_ASSERT(s == stream_.get());  // cuBLAS is bound to stream_
  const int B = slots_;
  mark(StageMarker::kStart, s);
  enqueue_fetch(s);
  mark("inputs in", s);
  const auto* seed = reinterpret_cast<const uint64_t*>(in_dev_.data() + in_.seed);
  const auto* deterministic = reinterpret_cast<const uint32_t*>(in_dev_.data() + in_.deterministic);
  float* actions = out_dev_.data() + out_.actions;      // (B, action floats)
  float* log_probs = out_dev_.data() + out_.log_probs;  // (B)
  float* values = out_dev_.data() + out_.values;        // (B)

  if (two_streams()) {
    // The critic's tower on its own stream from here to the critic head: both towers read only
    // the input block; their cores' states are separate regions of state_.
    critic_->fork_from(s);
    enqueue_tower(towers_[1], critic_->get(), critic_->cublas(), false);
  }
  enqueue_tower(towers_[0], s, cublas_->get());
  actor_head_->enqueue(cublas_->get(), towers_[0].h.data(), head_out_.data(), s);
  mark("actor head", s);
  const int d = spec_.action_dim;
  const float* low = box_.data();  // (d) each; null unless squashed
  const float* high = box_.data() ? box_.data() + d : nullptr;
  if (spec_.action_kind == ActionKind::kDiscrete)
    kernels::launch_categorical_head(head_out_.data(), B, d, seed, deterministic, actions,
                                     log_probs, s);
  else if (spec_.squash == Squash::kTanhGaussian)
    kernels::launch_tanh_gaussian_head(head_out_.data(), low, high, B, d, seed, deterministic,
                                       actions, log_probs, s);
  else if (spec_.squash == Squash::kTanh)
    kernels::launch_tanh_head(head_out_.data(), low, high, B, d, spec_.exploration_noise, seed,
                              deterministic, actions, log_probs, s);
  else
    kernels::launch_gaussian_head(head_out_.data(), log_std_.data(), B, d, seed, deterministic,
                                  actions, log_probs, s);
  mark("sample", s);
  if (two_streams())
    critic_->join_into(s);
  else if (!spec_.shared_core)
    enqueue_tower(towers_[1], s, cublas_->get());
  const Tower& critic = spec_.shared_core ? towers_[0] : towers_[1];
  critic_head_->enqueue(cublas_->get(), critic.h.data(), values, s);
  mark("critic head", s);
  enqueue_emit(0, out_.floats, s);
  mark("outputs out", s);
}

void CudaPolicyActor::record_peek(cudaStream_t s) {
  RECUR_ASSERT(s == stream_.get());
  mark(StageMarker::kStart, s);
  enqueue_fetch(s);
  CUDA_CHECK(cudaMemcpyAsync(saved_state_.data(), state_.data(), state_.bytes(),
                             cudaMemcpyDeviceToDevice, s));
  Tower& t = spec_.shared_core ? towers_[0] : towers_[1];
  enqueue_tower(t, s, cublas_->get());
  float* values = out_dev_.data() + out_.values;  // (B)
  critic_head_->enqueue(cublas_->get(), t.h.data(), values, s);
  CUDA_CHECK(cudaMemcpyAsync(state_.data(), saved_state_.data(), state_.bytes(),
                             cudaMemcpyDeviceToDevice, s));
  enqueue_emit(out_.values, static_cast<size_t>(slots_), s);
  mark("values out", s);
}

template <typename Record>
void CudaPolicyActor::run(kernels::CudaGraph& graph, bool& pending, Record record) {
  const cudaStream_t s = stream_.get();
  if (graph.ready())
    graph.launch(s);
  else
    record(s);
  if (mapped())
    kernels::wait_for_flag(flag_.data(), sequence_, s);
  else
    stream_.synchronize();
  // Capture after the first (plain) run: cuBLAS has loaded its kernels by then. A failed capture
  // throws once and leaves the plain path in use.
  if (pending) {
    pending = false;
    graph.capture(s, record);
  }
}

void CudaPolicyActor::act(std::span<const float> nobs, std::span<const uint8_t> episode_start,
                          Rng& rng, bool deterministic, std::span<float> actions,
                          std::span<float> log_probs, std::span<float> values) {
  const auto b = static_cast<size_t>(slots_);
  RECUR_CHECK_ARG(
      nobs.size() == b * static_cast<size_t>(spec_.obs_dim) && episode_start.size() == b,
      "act: obs has {} floats and episode_start {} flags, expected {} x {} and {}", nobs.size(),
      episode_start.size(), slots_, spec_.obs_dim, slots_);
  RECUR_CHECK_ARG(actions.size() == b * static_cast<size_t>(action_floats_) &&
                      log_probs.size() == b && values.size() == b,
                  "act: output buffers have the wrong sizes for {} slots", slots_);
  activate();
  stage_inputs(nobs, episode_start, deterministic ? 0 : rng.next_u64(), deterministic);
  run(act_graph_, act_pending_, [this](cudaStream_t s) { record_act(s); });
  const float* out = mapped() ? out_mapped_.data() : out_host_.data();
  std::copy_n(out + out_.actions, actions.size(), actions.begin());
  std::copy_n(out + out_.log_probs, b, log_probs.begin());
  std::copy_n(out + out_.values, b, values.begin());
}

void CudaPolicyActor::peek_values(std::span<const float> nobs,
                                  std::span<const uint8_t> episode_start, std::span<float> values) {
  const auto b = static_cast<size_t>(slots_);
  RECUR_CHECK_ARG(nobs.size() == b * static_cast<size_t>(spec_.obs_dim) &&
                      episode_start.size() == b && values.size() == b,
                  "peek_values: obs must be ({}, {}), episode_start and values ({})", slots_,
                  spec_.obs_dim, slots_);
  activate();
  stage_inputs(nobs, episode_start, 0, true);
  run(peek_graph_, peek_pending_, [this](cudaStream_t s) { record_peek(s); });
  const float* out = mapped() ? out_mapped_.data() : out_host_.data();
  std::copy_n(out + out_.values, b, values.begin());
}

void CudaPolicyActor::get_states(std::span<float> out) const {
  const auto S = static_cast<size_t>(spec_.state_size());
  RECUR_CHECK_ARG(out.size() == S * static_cast<size_t>(slots_),
                  "get_states: {} floats, expected {}", out.size(),
                  S * static_cast<size_t>(slots_));
  activate();
  CUDA_CHECK(cudaMemcpyAsync(state_host_.data(), state_.data(), state_.bytes(),
                             cudaMemcpyDeviceToHost, stream_.get()));
  stream_.synchronize();
  const int H = spec_.hidden, L = spec_.layers;
  const auto cs = static_cast<size_t>(spec_.core_spec().state_size());
  const size_t core_floats = CudaCore::state_floats(spec_.core_spec(), slots_);
  const auto h_floats = static_cast<size_t>(H);
  for (int c = 0; c < (spec_.shared_core ? 1 : 2); ++c) {
    const CudaCore& core = *towers_[c].core;
    const float* image = state_host_.data() + core_floats * static_cast<size_t>(c);
    for (int b = 0; b < slots_; ++b) {
      float* dst = out.data() + S * static_cast<size_t>(b) + cs * static_cast<size_t>(c);
      for (int k = 0; k < L; ++k) {
        std::copy_n(image + core.h_offset(k, b), h_floats, dst + floats(k, H));
        if (core.has_c())
          std::copy_n(image + core.c_offset(k, b), h_floats, dst + floats(L + k, H));
      }
    }
  }
}

void CudaPolicyActor::set_states(std::span<const float> states) {
  const auto S = static_cast<size_t>(spec_.state_size());
  RECUR_CHECK_ARG(states.size() == S * static_cast<size_t>(slots_),
                  "set_states: {} floats, expected {}", states.size(),
                  S * static_cast<size_t>(slots_));
  activate();
  // The x columns of the xh stacks are scratch (every step rewrites them): zeros are fine.
  std::fill_n(state_host_.data(), state_host_.size(), 0.0f);
  const int H = spec_.hidden, L = spec_.layers;
  const auto cs = static_cast<size_t>(spec_.core_spec().state_size());
  const size_t core_floats = CudaCore::state_floats(spec_.core_spec(), slots_);
  const auto h_floats = static_cast<size_t>(H);
  for (int c = 0; c < (spec_.shared_core ? 1 : 2); ++c) {
    const CudaCore& core = *towers_[c].core;
    float* image = state_host_.data() + core_floats * static_cast<size_t>(c);
    for (int b = 0; b < slots_; ++b) {
      const float* src = states.data() + S * static_cast<size_t>(b) + cs * static_cast<size_t>(c);
      for (int k = 0; k < L; ++k) {
        std::copy_n(src + floats(k, H), h_floats, image + core.h_offset(k, b));
        if (core.has_c())
          std::copy_n(src + floats(L + k, H), h_floats, image + core.c_offset(k, b));
      }
    }
  }
  CUDA_CHECK(cudaMemcpyAsync(state_.data(), state_host_.data(), state_.bytes(),
                             cudaMemcpyHostToDevice, stream_.get()));
  stream_.synchronize();  // the pinned mirror is reused by the next call
}

void CudaPolicyActor::reset(int slot) {
  RECUR_CHECK_ARG(slot >= 0 && slot < slots_, "slot {} outside [0, {})", slot, slots_);
  activate();
  const size_t bytes = sizeof(float) * static_cast<size_t>(spec_.hidden);
  // Stream-ordered like every step, and no host memory is involved: no wait needed.
  for (int c = 0; c < (spec_.shared_core ? 1 : 2); ++c) {
    const CudaCore& core = *towers_[c].core;
    const size_t base = CudaCore::state_floats(spec_.core_spec(), slots_) * static_cast<size_t>(c);
    for (int k = 0; k < spec_.layers; ++k) {
      CUDA_CHECK(
          cudaMemsetAsync(state_.data() + base + core.h_offset(k, slot), 0, bytes, stream_.get()));
      if (core.has_c())
        CUDA_CHECK(cudaMemsetAsync(state_.data() + base + core.c_offset(k, slot), 0, bytes,
                                   stream_.get()));
    }
  }
}

}  // namespace recur::policy
