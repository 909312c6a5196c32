// The CUDA step executor's host side: buffers, cuBLAS, the enqueue sequence of one step and
// state access. The design is drawn in cuda_step_executor.h; the step's math is CudaCore's.
#include "policy/cuda/cuda_step_executor.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "kernels/gather.h"
#include "kernels/mapped_io.h"

namespace recur::policy {
namespace {

// cuBLAS's recommended workspace for Hopper (4 MiB suffices before it). Preallocated so that
// neither a step nor its graph capture makes cuBLAS allocate.
constexpr size_t kCublasWorkspaceBytes = size_t{32} << 20;

int use_device(int device) {
  RECUR_CHECK_ARG(device >= 0, "CudaStepExecutor: device {} is not a CUDA device ordinal", device);
  CUDA_CHECK(cudaSetDevice(device));
  return device;
}

size_t floats(int a, int b) {
  return static_cast<size_t>(a) * static_cast<size_t>(b);
}

}  // namespace

CudaStepExecutor::CudaStepExecutor(const CoreSpec& spec, int slots, const CudaStepOptions& options)
    : StepExecutor(spec, slots),
      options_(options),
      device_(use_device(options.device)),
      state_(CudaCore::state_floats(spec, slots)),
      core_(spec, slots, state_.data(), stream_.get()) {
  const int B = slots, H = spec.hidden;
  cublas_ = std::make_unique<CublasHandle>(stream_.get(), kCublasWorkspaceBytes);

  // Every buffer, once; zeros are the initial state (and keep garbage out of the first GEMM).
  const cudaStream_t s = stream_.get();
  state_.zero(s);
  out_.resize(floats(B, H));
  out_.zero(s);
  in_starts_ = sizeof(float) * floats(B, spec.input);
  in_sequence_ = (in_starts_ + static_cast<size_t>(B) + 3) / 4 * 4;
  in_bytes_ = (in_sequence_ + sizeof(uint32_t) + 15) / 16 * 16;  // the fetch kernel's word
  in_dev_.resize(in_bytes_);
  in_dev_.zero(s);
  if (mapped()) {
    in_mapped_.resize(in_bytes_);
    out_mapped_.resize(floats(B, H));
    flag_.resize(1);
    emit_counter_.resize(1);
    emit_counter_.zero(s);
  } else {
    in_host_.resize(in_bytes_);
    std::memset(in_host_.data(), 0, in_bytes_);
    out_host_.resize(floats(B, H));
  }
  state_host_.resize(static_cast<size_t>(spec.state_size()));
  stream_.synchronize();
  graph_pending_ = options.use_graph;
}

CudaStepExecutor::~CudaStepExecutor() {
  // Nothing may still run on buffers about to be freed; errors cannot be reported here.
  static_cast<void>(cudaSetDevice(device_));
  static_cast<void>(cudaStreamSynchronize(stream_.get()));
}

void CudaStepExecutor::activate() const {
  CUDA_CHECK(cudaSetDevice(device_));
}

void CudaStepExecutor::load_impl(const CanonicalWeights& weights) {
  activate();
  core_.load(weights);
}

CanonicalWeights CudaStepExecutor::weights_impl() const {
  activate();
  const FlatLayout& layout = core_.layout();
  std::vector<float> buffer(static_cast<size_t>(layout.size));
  CUDA_CHECK(cudaMemcpyAsync(buffer.data(), core_.weights(), sizeof(float) * buffer.size(),
                             cudaMemcpyDeviceToHost, stream_.get()));
  stream_.synchronize();
  std::vector<float> flat(layout.position.size());
  gather_canonical(layout, buffer, flat);
  return unflatten(spec(), flat);
}

void CudaStepExecutor::load_device(const float* src, const FlatLayout& src_layout,
                                   cudaStream_t src_stream) {
  activate();
  RECUR_CHECK_ARG(src_layout.position.size() == core_.layout().position.size(),
                  "load_device: the '{}' layout places {} canonical weights, this core has {}",
                  src_layout.name, src_layout.position.size(), core_.layout().position.size());
  RECUR_CHECK_ARG(src != nullptr, "load_device: null source buffer");
  cudaPointerAttributes attributes{};
  CUDA_CHECK(cudaPointerGetAttributes(&attributes, src));
  RECUR_CHECK_ARG(
      (attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged) &&
          attributes.device == device_,
      "load_device: the source is not device memory of CUDA device {}", device_);
  // The gather index depends only on the two layouts: build it once per source layout.
  if (src_layout.size != cached_src_size_ || src_layout.position != cached_src_position_) {
    for (const int64_t p : src_layout.position)
      RECUR_CHECK_ARG(p >= 0 && p < src_layout.size,
                      "load_device: the '{}' layout places a weight at {}, outside its {} floats",
                      src_layout.name, p, src_layout.size);
    const std::vector<int64_t> index = conversion_index(src_layout, core_.layout());
    RECUR_ASSERT(index.size() == static_cast<size_t>(core_.layout().size));
    conversion_index_.resize(index.size());
    conversion_index_.upload(index, stream_.get());
    stream_.synchronize();
    cached_src_size_ = src_layout.size;
    cached_src_position_ = src_layout.position;
  }
  // src is complete once its stream's queued work is; it may change again once we return.
  CUDA_CHECK(cudaStreamSynchronize(src_stream));
  kernels::launch_gather(src, core_.weights(), conversion_index_.data(),
                         static_cast<size_t>(core_.layout().size), stream_.get());
  stream_.synchronize();
}

void CudaStepExecutor::record(cudaStream_t s) {
  RECUR_ASSERT(s == stream_.get());  // cuBLAS is bound to stream_
  // The input block in one contiguous copy (or fetch), then one kernel places x and resets.
  if (mapped())
    kernels::launch_fetch(in_mapped_.device(), in_dev_.data(), in_bytes_, s);
  else
    CUDA_CHECK(
        cudaMemcpyAsync(in_dev_.data(), in_host_.data(), in_bytes_, cudaMemcpyHostToDevice, s));
  core_.enqueue(cublas_->get(), reinterpret_cast<const float*>(in_dev_.data()),
                in_dev_.data() + in_starts_, out_.data(), s);
  if (!mapped()) {
    CUDA_CHECK(
        cudaMemcpyAsync(out_host_.data(), out_.data(), out_.bytes(), cudaMemcpyDeviceToHost, s));
    return;
  }
  kernels::EmitArgs e;
  e.src = out_.data();
  e.dst = out_mapped_.device();
  e.n = out_.size();
  e.seq = reinterpret_cast<const uint32_t*>(in_dev_.data() + in_sequence_);
  e.flag = flag_.device();
  e.counter = emit_counter_.data();
  kernels::launch_emit(e, s);
}

void CudaStepExecutor::step_impl(std::span<const float> x, std::span<const uint8_t> episode_start,
                                 std::span<float> h_out) {
  activate();
  const cudaStream_t s = stream_.get();
  unsigned char* block = mapped() ? in_mapped_.data() : in_host_.data();
  std::memcpy(block, x.data(), x.size_bytes());
  std::memcpy(block + in_starts_, episode_start.data(), episode_start.size_bytes());
  if (++sequence_ == 0) sequence_ = 1;  // 0 is the flag's initial value: never expected
  std::memcpy(block + in_sequence_, &sequence_, sizeof sequence_);
  if (graph_.ready()) {
    graph_.launch(s);
  } else {
    record(s);
  }
  if (mapped()) {
    kernels::wait_for_flag(flag_.data(), sequence_, s);
    std::copy_n(out_mapped_.data(), h_out.size(), h_out.begin());
  } else {
    stream_.synchronize();
    std::copy_n(out_host_.data(), h_out.size(), h_out.begin());
  }
  // Capture after the first (plain) step: cuBLAS has loaded its kernels by then. A failed capture
  // throws once and leaves the plain path in use.
  if (graph_pending_) {
    graph_pending_ = false;
    graph_.capture(s, [this](cudaStream_t st) { record(st); });
  }
}

void CudaStepExecutor::get_state_impl(int slot, std::span<float> out) const {
  activate();
  const int H = spec().hidden, L = spec().layers;
  const size_t bytes = sizeof(float) * static_cast<size_t>(H);
  float* staged = state_host_.data();
  for (int k = 0; k < L; ++k) {
    CUDA_CHECK(cudaMemcpyAsync(staged + floats(k, H), state_.data() + core_.h_offset(k, slot),
                               bytes, cudaMemcpyDeviceToHost, stream_.get()));
    if (core_.has_c())
      CUDA_CHECK(cudaMemcpyAsync(staged + floats(L + k, H), state_.data() + core_.c_offset(k, slot),
                                 bytes, cudaMemcpyDeviceToHost, stream_.get()));
  }
  stream_.synchronize();
  std::copy_n(staged, out.size(), out.begin());
}

void CudaStepExecutor::set_state_impl(int slot, std::span<const float> state) {
  activate();
  const int H = spec().hidden, L = spec().layers;
  const size_t bytes = sizeof(float) * static_cast<size_t>(H);
  float* staged = state_host_.data();
  std::copy(state.begin(), state.end(), staged);
  for (int k = 0; k < L; ++k) {
    CUDA_CHECK(cudaMemcpyAsync(state_.data() + core_.h_offset(k, slot), staged + floats(k, H),
                               bytes, cudaMemcpyHostToDevice, stream_.get()));
    if (core_.has_c())
      CUDA_CHECK(cudaMemcpyAsync(state_.data() + core_.c_offset(k, slot), staged + floats(L + k, H),
                                 bytes, cudaMemcpyHostToDevice, stream_.get()));
  }
  stream_.synchronize();  // the staging buffer is reused by the next call
}

void CudaStepExecutor::reset_impl(int slot) {
  activate();
  const size_t bytes = sizeof(float) * static_cast<size_t>(spec().hidden);
  // Stream-ordered like every step, and no host memory is involved: no wait needed.
  for (int k = 0; k < spec().layers; ++k) {
    CUDA_CHECK(cudaMemsetAsync(state_.data() + core_.h_offset(k, slot), 0, bytes, stream_.get()));
    if (core_.has_c())
      CUDA_CHECK(cudaMemsetAsync(state_.data() + core_.c_offset(k, slot), 0, bytes, stream_.get()));
  }
}

}  // namespace recur::policy
