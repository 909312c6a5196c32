// The CUDA core block: CudaStepExecutor's record() without the staging copies (see cuda_core.h).
#include "policy/cuda/cuda_core.h"

#include "core/error.h"
#include "kernels/cell_gates.h"

namespace recur::policy {
namespace {

size_t floats(int a, int b) {
  return static_cast<size_t>(a) * static_cast<size_t>(b);
}

int step_columns(const CoreSpec& spec) {
  return spec.cell == CellType::kGru ? 4 * spec.hidden : spec.gates() * spec.hidden;
}  // minGRU: 2H; with the highway 3H

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
    case CellType::kLstmLn:
      return kernels::Cell::kLstmLn;
    case CellType::kMinGru:
      return kernels::Cell::kMinGru;
    case CellType::kMinGruHighway:
      return kernels::Cell::kMinGruHighway;
  }
  RECUR_ASSERT(false);
  return kernels::Cell::kLstm;
}

}  // namespace

size_t CudaCore::state_floats(const CoreSpec& spec, int slots) {
  const size_t xh = kernels::xh_stack_size(spec.layers, slots, spec.input, spec.hidden);
  return xh + (has_cell_state(spec.cell) ? floats(spec.layers, slots) * spec.hidden : 0);
}

CudaCore::CudaCore(const CoreSpec& spec, int slots, float* state, cudaStream_t stream)
    : spec_(spec),
      slots_(slots),
      state_(state),
      stream_(stream),
      layout_(step_layout(spec)),
      columns_(step_columns(spec)) {
  spec.validate();
  RECUR_CHECK_ARG(slots >= 1, "CudaCore needs at least one slot, got {}", slots);
  RECUR_ASSERT(state != nullptr);
  // Our belief about the step layout, checked once: (K_k, C) per layer, as the kernels assume.
  for (int k = 0; k < spec.layers; ++k) {
    offsets_.push_back(step_layer_offsets(spec, k));
    const StepLayerOffsets& o = offsets_.back();
    RECUR_ASSERT(o.rows == spec.layer_input(k) + spec.hidden && o.columns == columns_);
    RECUR_ASSERT(o.w >= 0 && o.w + static_cast<int64_t>(floats(o.rows, o.columns)) <= layout_.size);
    RECUR_ASSERT(o.bias_ih >= 0 && o.bias_ih + spec.bias_rows() <= layout_.size);
    RECUR_ASSERT(o.bias_hh >= 0 && o.bias_hh + spec.bias_rows() <= layout_.size);
    RECUR_ASSERT(o.norm_bias >= 0 && o.norm_bias + spec.norm_size() <= layout_.size);
  }
  weights_.resize(static_cast<size_t>(layout_.size));
  gates_.resize(floats(slots, columns_));
  weights_.zero(stream);
  gates_.zero(stream);
}

bool CudaCore::has_c() const {
  return has_cell_state(spec_.cell);
}

size_t CudaCore::h_offset(int layer, int slot) const {
  const int in = spec_.layer_input(layer), H = spec_.hidden;
  return kernels::xh_stack_offset(layer, slots_, spec_.input, H) + floats(slot, in + H) +
         static_cast<size_t>(in);
}

size_t CudaCore::c_offset(int layer, int slot) const {
  RECUR_ASSERT(has_c());
  return kernels::xh_stack_size(spec_.layers, slots_, spec_.input, spec_.hidden) +
         (floats(layer, slots_) + static_cast<size_t>(slot)) * static_cast<size_t>(spec_.hidden);
}

void CudaCore::load(const CanonicalWeights& weights) {
  RECUR_CHECK_ARG(
      weights.spec == spec_ && weights.layers.size() == static_cast<size_t>(spec_.layers),
      "CudaCore::load: weights are for a {} core (input {}, hidden {}, layers {}), "
      "the core runs {} (input {}, hidden {}, layers {})",
      to_string(weights.spec.cell), weights.spec.input, weights.spec.hidden, weights.spec.layers,
      to_string(spec_.cell), spec_.input, spec_.hidden, spec_.layers);
  std::vector<float> buffer(static_cast<size_t>(layout_.size));
  scatter_canonical(layout_, flatten(weights), buffer);
  weights_.upload(buffer, stream_);
  CUDA_CHECK(cudaStreamSynchronize(stream_));  // buffer is freed on return
}

void CudaCore::enqueue(cublasHandle_t cublas, const float* x, const uint8_t* starts, float* out,
                       cudaStream_t stream) {
  const int B = slots_, H = spec_.hidden, L = spec_.layers, in = spec_.input;
  constexpr float kOne = 1.0f, kZero = 0.0f;
  float* xh_stack = state_;
  float* c = has_c() ? state_ + kernels::xh_stack_size(L, B, in, H) : nullptr;
  kernels::launch_prepare_step(x, starts, xh_stack, c, L, B, in, H, stream);
  for (int k = 0; k < L; ++k) {
    const StepLayerOffsets& o = offsets_[static_cast<size_t>(k)];
    float* xh = xh_stack + kernels::xh_stack_offset(k, B, in, H);
    const float* w = weights_.data() + o.w;
    // gates (B, C) = xh (B, K) * w (K, C), row-major; column-major: gates^T = w^T * xh^T.
    CUBLAS_CHECK(cublasSgemm(cublas, CUBLAS_OP_N, CUBLAS_OP_N, columns_, B, o.rows, &kOne, w,
                             columns_, xh, o.rows, &kZero, gates_.data(), columns_));
    kernels::CellGatesArgs a;
    a.cell = kernel_cell(spec_.cell);
    a.batch = B;
    a.hidden = H;
    a.cell_clip = spec_.cell == CellType::kLstm ? spec_.cell_clip : 0.0f;
    a.gates = gates_.data();
    a.bias_ih = weights_.data() + o.bias_ih;
    a.bias_hh = weights_.data() + o.bias_hh;
    a.norm_weight = weights_.data() + o.norm_weight;  // lstm_ln's; zero-length otherwise
    a.norm_bias = weights_.data() + o.norm_bias;
    a.norm_epsilon = spec_.norm_epsilon;
    // The skip of a residual or highway stack: this layer's input, its x columns.
    if (k > 0 && has_layer_output(spec_.cell, k)) {
      a.residual = xh;
      a.residual_stride = o.rows;
    }
    a.h = xh + spec_.layer_input(k);
    a.h_stride = o.rows;
    a.c = c ? c + floats(k, B) * static_cast<size_t>(H) : nullptr;
    if (k + 1 < L) {
      a.h_next = xh_stack + kernels::xh_stack_offset(k + 1, B, in, H);
      a.next_stride = offsets_[static_cast<size_t>(k + 1)].rows;
    } else {
      a.out = out;
    }
    kernels::launch_cell_gates(a, stream);
  }
}

}  // namespace recur::policy
