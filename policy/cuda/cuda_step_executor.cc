// The CUDA step executor's host side: buffers, cuBLAS, the enqueue sequence of one step and
// state access. The design is drawn in cuda_step_executor.h; the kernels are kernels/cell_gates.
#include "policy/cuda/cuda_step_executor.h"

#include <algorithm>

#include "core/error.h"
#include "kernels/cell_gates.h"
#include "kernels/gather.h"

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

int step_columns(const CoreSpec& spec) {
  return spec.cell == CellType::kGru ? 4 * spec.hidden : spec.gates() * spec.hidden;
}

kernels::Cell kernel_cell(CellType cell) {
  switch (cell) {
    case CellType::kLstm:
      return kernels::Cell::kLstm;
    case CellType::kGru:
      return kernels::Cell::kGru;
    case CellType::kRnnTanh:
      return kernels::Cell::kRnnTanh;
    case CellType::kRnnRelu:
      return kernels::Cell::kRnnRelu;
  }
  RECUR_ASSERT(false);
  return kernels::Cell::kLstm;
}

size_t floats(int a, int b) {
  return static_cast<size_t>(a) * static_cast<size_t>(b);
}

}  // namespace

CudaStepExecutor::CudaStepExecutor(const CoreSpec& spec, int slots, const CudaStepOptions& options)
    : StepExecutor(spec, slots),
      options_(options),
      device_(use_device(options.device)),
      layout_(step_layout(spec)),
      columns_(step_columns(spec)) {
  const int B = slots, H = spec.hidden, L = spec.layers;
  // Our belief about the step layout, checked once: (K_k, C) per layer, as the kernels assume.
  for (int k = 0; k < L; ++k) {
    offsets_.push_back(step_layer_offsets(spec, k));
    const StepLayerOffsets& o = offsets_.back();
    RECUR_ASSERT(o.rows == spec.layer_input(k) + H && o.columns == columns_);
    RECUR_ASSERT(o.w >= 0 && o.w + static_cast<int64_t>(floats(o.rows, o.columns)) <= layout_.size);
    RECUR_ASSERT(o.bias_ih >= 0 && o.bias_ih + spec.gates() * H <= layout_.size);
    RECUR_ASSERT(o.bias_hh >= 0 && o.bias_hh + spec.gates() * H <= layout_.size);
  }

  // cuBLAS on our stream with our workspace (SetStream resets the workspace: set it after).
  cublasHandle_t handle = nullptr;
  CUBLAS_CHECK(cublasCreate(&handle));
  cublas_.reset(handle);
  CUBLAS_CHECK(cublasSetStream(handle, stream_.get()));
  cublas_workspace_.resize(kCublasWorkspaceBytes);
  CUBLAS_CHECK(cublasSetWorkspace(handle, cublas_workspace_.data(), cublas_workspace_.bytes()));
  CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));  // fp32 FMA, no TF32

  // Every buffer, once; zeros are the initial state (and keep garbage out of the first GEMM).
  const cudaStream_t s = stream_.get();
  weights_.resize(static_cast<size_t>(layout_.size));
  xh_.resize(kernels::xh_stack_size(L, B, spec.input, H));
  if (has_cell_state(spec.cell)) c_.resize(floats(L, B) * static_cast<size_t>(H));
  gates_.resize(floats(B, columns_));
  out_.resize(floats(B, H));
  starts_.resize(static_cast<size_t>(B));
  for (auto* buffer : {&weights_, &xh_, &c_, &gates_, &out_}) buffer->zero(s);
  starts_.zero(s);
  x_host_.resize(floats(B, spec.input));
  starts_host_.resize(static_cast<size_t>(B));
  out_host_.resize(floats(B, H));
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

size_t CudaStepExecutor::h_offset(int layer, int slot) const {
  const int in = spec().layer_input(layer), H = spec().hidden;
  return kernels::xh_stack_offset(layer, slots(), spec().input, H) + floats(slot, in + H) +
         static_cast<size_t>(in);
}

size_t CudaStepExecutor::c_offset(int layer, int slot) const {
  return (floats(layer, slots()) + static_cast<size_t>(slot)) * static_cast<size_t>(spec().hidden);
}

void CudaStepExecutor::load_impl(const CanonicalWeights& weights) {
  activate();
  std::vector<float> buffer(static_cast<size_t>(layout_.size));
  scatter_canonical(layout_, flatten(weights), buffer);
  weights_.upload(buffer, stream_.get());
  stream_.synchronize();
}

CanonicalWeights CudaStepExecutor::weights_impl() const {
  activate();
  std::vector<float> buffer(static_cast<size_t>(layout_.size));
  weights_.download(buffer, stream_.get());
  stream_.synchronize();
  std::vector<float> flat(layout_.position.size());
  gather_canonical(layout_, buffer, flat);
  return unflatten(spec(), flat);
}

void CudaStepExecutor::load_device(const float* src, const FlatLayout& src_layout,
                                   cudaStream_t src_stream) {
  activate();
  RECUR_CHECK_ARG(src_layout.position.size() == layout_.position.size(),
                  "load_device: the '{}' layout places {} canonical weights, this core has {}",
                  src_layout.name, src_layout.position.size(), layout_.position.size());
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
    const std::vector<int64_t> index = conversion_index(src_layout, layout_);
    RECUR_ASSERT(index.size() == static_cast<size_t>(layout_.size));
    conversion_index_.resize(index.size());
    conversion_index_.upload(index, stream_.get());
    stream_.synchronize();
    cached_src_size_ = src_layout.size;
    cached_src_position_ = src_layout.position;
  }
  // src is complete once its stream's queued work is; it may change again once we return.
  CUDA_CHECK(cudaStreamSynchronize(src_stream));
  kernels::launch_gather(src, weights_.data(), conversion_index_.data(),
                         static_cast<size_t>(layout_.size), stream_.get());
  stream_.synchronize();
}

void CudaStepExecutor::record(cudaStream_t s) {
  RECUR_ASSERT(s == stream_.get());  // cuBLAS is bound to stream_
  const int B = slots(), H = spec().hidden, L = spec().layers, in = spec().input;
  constexpr float kOne = 1.0f, kZero = 0.0f;
  // Inputs: obs into layer 0's x columns (row pitch K_0), and the reset flags.
  CUDA_CHECK(cudaMemcpy2DAsync(xh_.data(), sizeof(float) * static_cast<size_t>(in + H),
                               x_host_.data(), sizeof(float) * static_cast<size_t>(in),
                               sizeof(float) * static_cast<size_t>(in), static_cast<size_t>(B),
                               cudaMemcpyHostToDevice, s));
  CUDA_CHECK(cudaMemcpyAsync(starts_.data(), starts_host_.data(), starts_.bytes(),
                             cudaMemcpyHostToDevice, s));
  kernels::launch_reset_state(starts_.data(), xh_.data(), c_.size() ? c_.data() : nullptr, L, B, in,
                              H, s);
  for (int k = 0; k < L; ++k) {
    const StepLayerOffsets& o = offsets_[static_cast<size_t>(k)];
    float* xh = xh_.data() + kernels::xh_stack_offset(k, B, in, H);
    const float* w = weights_.data() + o.w;
    // gates (B, C) = xh (B, K) * w (K, C), row-major; column-major: gates^T = w^T * xh^T.
    CUBLAS_CHECK(cublasSgemm(cublas_.get(), CUBLAS_OP_N, CUBLAS_OP_N, columns_, B, o.rows, &kOne, w,
                             columns_, xh, o.rows, &kZero, gates_.data(), columns_));
    kernels::CellGatesArgs a;
    a.cell = kernel_cell(spec().cell);
    a.batch = B;
    a.hidden = H;
    a.cell_clip = spec().cell == CellType::kLstm ? spec().cell_clip : 0.0f;
    a.gates = gates_.data();
    a.bias_ih = weights_.data() + o.bias_ih;
    a.bias_hh = weights_.data() + o.bias_hh;
    a.h = xh + spec().layer_input(k);
    a.h_stride = o.rows;
    a.c = c_.size() ? c_.data() + c_offset(k, 0) : nullptr;
    if (k + 1 < L) {
      a.h_next = xh_.data() + kernels::xh_stack_offset(k + 1, B, in, H);
      a.next_stride = offsets_[static_cast<size_t>(k + 1)].rows;
    } else {
      a.out = out_.data();
    }
    kernels::launch_cell_gates(a, s);
  }
  CUDA_CHECK(
      cudaMemcpyAsync(out_host_.data(), out_.data(), out_.bytes(), cudaMemcpyDeviceToHost, s));
}

void CudaStepExecutor::step_impl(std::span<const float> x, std::span<const uint8_t> episode_start,
                                 std::span<float> h_out) {
  activate();
  std::copy(x.begin(), x.end(), x_host_.data());
  std::copy(episode_start.begin(), episode_start.end(), starts_host_.data());
  if (graph_.ready()) {
    graph_.launch(stream_.get());
  } else {
    record(stream_.get());
  }
  stream_.synchronize();
  std::copy_n(out_host_.data(), h_out.size(), h_out.begin());
  // Capture after the first (plain) step: cuBLAS has loaded its kernels by then. A failed capture
  // throws once and leaves the plain path in use.
  if (graph_pending_) {
    graph_pending_ = false;
    graph_.capture(stream_.get(), [this](cudaStream_t s) { record(s); });
  }
}

void CudaStepExecutor::get_state_impl(int slot, std::span<float> out) const {
  activate();
  const int H = spec().hidden, L = spec().layers;
  const size_t bytes = sizeof(float) * static_cast<size_t>(H);
  float* staged = state_host_.data();
  for (int k = 0; k < L; ++k) {
    CUDA_CHECK(cudaMemcpyAsync(staged + floats(k, H), xh_.data() + h_offset(k, slot), bytes,
                               cudaMemcpyDeviceToHost, stream_.get()));
    if (c_.size())
      CUDA_CHECK(cudaMemcpyAsync(staged + floats(L + k, H), c_.data() + c_offset(k, slot), bytes,
                                 cudaMemcpyDeviceToHost, stream_.get()));
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
    CUDA_CHECK(cudaMemcpyAsync(xh_.data() + h_offset(k, slot), staged + floats(k, H), bytes,
                               cudaMemcpyHostToDevice, stream_.get()));
    if (c_.size())
      CUDA_CHECK(cudaMemcpyAsync(c_.data() + c_offset(k, slot), staged + floats(L + k, H), bytes,
                                 cudaMemcpyHostToDevice, stream_.get()));
  }
  stream_.synchronize();  // the staging buffer is reused by the next call
}

void CudaStepExecutor::reset_impl(int slot) {
  activate();
  const size_t bytes = sizeof(float) * static_cast<size_t>(spec().hidden);
  // Stream-ordered like every step, and no host memory is involved: no wait needed.
  for (int k = 0; k < spec().layers; ++k) {
    CUDA_CHECK(cudaMemsetAsync(xh_.data() + h_offset(k, slot), 0, bytes, stream_.get()));
    if (c_.size())
      CUDA_CHECK(cudaMemsetAsync(c_.data() + c_offset(k, slot), 0, bytes, stream_.get()));
  }
}

}  // namespace recur::policy
