#include "policy/cudnn/cudnn_sequence_executor.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "kernels/gather.h"
#include "kernels/low_float.h"
#include "kernels/state_gather.h"
#include "policy/cudnn/cudnn_weight_table.h"

namespace recur::policy {
namespace {

// Refuses a cell cuDNN lacks (minGRU) and selects the device, before any member (stream, handle,
// buffers) is created on it.
const CudnnSequenceOptions& select_device(const CoreSpec& spec,
                                          const CudnnSequenceOptions& options) {
  require_cudnn_core(spec);
  CUDA_CHECK(cudaSetDevice(options.device));
  return options;
}

cudnnRNNMode_t cell_mode(CellType cell) {
  switch (cell) {
    case CellType::kLstm:
      return CUDNN_LSTM;
    case CellType::kGru:
      return CUDNN_GRU;
    case CellType::kRnnTanh:
      return CUDNN_RNN_TANH;
    case CellType::kRnnRelu:
      return CUDNN_RNN_RELU;
    case CellType::kMinGru:
    case CellType::kMinGruHighway:
    case CellType::kLstmLn:
      break;  // cuDNN has none of them: refused by require_cudnn_core() in the constructor
  }
  RECUR_ASSERT(false);
  return CUDNN_LSTM;
}

cudnnMathType_t math_type(RnnMath math) {
  switch (math) {
    case RnnMath::kFma:
      return CUDNN_FMA_MATH;  // no tensor cores: parity with the CPU executors
    case RnnMath::kTf32:
      return CUDNN_DEFAULT_MATH;  // TF32 tensor cores on Ampere and later
    case RnnMath::kFp16:
      return CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
  }
  RECUR_ASSERT(false);
  return CUDNN_FMA_MATH;
}

cudnnDataType_t cudnn_data_type(RnnData data) {
  switch (data) {
    case RnnData::kFp32:
      return CUDNN_DATA_FLOAT;
    case RnnData::kFp16:
      return CUDNN_DATA_HALF;
    case RnnData::kBf16:
      return CUDNN_DATA_BFLOAT16;
  }
  RECUR_ASSERT(false);
  return CUDNN_DATA_FLOAT;
}

// PERSIST_STATIC_SMALL_H's backward limits (PyTorch's use_rnn_persist_small_h; docs/RNN_LAYOUT.md).
bool small_h(const CoreSpec& spec) {
  const bool gated = spec.cell == CellType::kLstm || spec.cell == CellType::kGru;
  return spec.hidden <= (gated ? 128 : 256);
}

// cuDNN 9 statuses come in categories (NOT_SUPPORTED_SHAPE, ..._ARCH_MISMATCH, ...). The
// persistent algorithm's refusal is any NOT_SUPPORTED or BAD_PARAM answer: STANDARD, which would
// fail the same way on a real error, then runs and reports it.
bool refused(cudnnStatus_t status) {
  const int category = static_cast<int>(status) / 1000 * 1000;
  return category == CUDNN_STATUS_NOT_SUPPORTED || category == CUDNN_STATUS_BAD_PARAM;
}

bool same_table(const OpaqueTable& a, const OpaqueTable& b) {
  if (a.size != b.size || a.entries.size() != b.entries.size()) return false;
  for (size_t i = 0; i < a.entries.size(); ++i) {
    const OpaqueEntry &x = a.entries[i], &y = b.entries[i];
    if (x.pseudo_layer != y.pseudo_layer || x.lin_id != y.lin_id || x.bias != y.bias ||
        x.offset != y.offset || x.dims != y.dims)
      return false;
  }
  return true;
}

}  // namespace

CudnnSequenceExecutor::CudnnSequenceExecutor(const CoreSpec& spec,
                                             const CudnnSequenceOptions& options,
                                             cudaStream_t stream)
    : DeviceSequenceExecutor(spec),
      options_(select_device(spec, options)),
      external_stream_(stream),
      dropout_(handle_.get()) {
  CUDNN_CHECK(cudnnSetStream(handle_.get(), this->stream()));
  low_ = options_.data != RnnData::kFp32;
  data_type_ = cudnn_data_type(options_.data);
  // The fp32 descriptor: cuDNN's own (standard_) with fp32 data, else master_, whose weight
  // space only lays out the master weights.
  const cudnn::RnnDescriptor& fp32 = low_ ? master_ : standard_;
  const bool configured = configure(fp32, CUDNN_RNN_ALGO_STANDARD, CUDNN_DATA_FLOAT);
  RECUR_ASSERT(configured);  // errors throw

  // The opaque weight space and cuDNN's own account of where every gate lives.
  CUDNN_CHECK(cudnnGetRNNWeightSpaceSize(handle_.get(), fp32.get(), &weight_bytes_));
  RECUR_ASSERT(weight_bytes_ > 0 && weight_bytes_ % sizeof(float) == 0);
  const size_t n = weight_bytes_ / sizeof(float);
  w_.resize(n);
  dw_.resize(n);
  table_ = cudnn::query_weight_table(handle_.get(), fp32.get(), spec, w_.data(), weight_bytes_);
  layout_ = opaque_layout(spec, table_);
  RECUR_ASSERT(layout_.size == static_cast<int64_t>(n));
  host_w_.resize(n);
  host_dw_.resize(n);
  std::fill_n(host_w_.data(), n, 0.0f);
  std::fill_n(host_dw_.data(), n, 0.0f);
  w_.zero(this->stream());
  dw_.zero(this->stream());
  if (low_) configure_low_precision();

  // The persistent descriptor, kept only when cuDNN accepts it with the very same weight layout
  // (the weight space is shared between the two descriptors).
  if (options_.algo != RnnAlgo::kStandard && small_h(spec)) {
    try {
      size_t bytes = 0;
      if (configure(persist_, CUDNN_RNN_ALGO_PERSIST_STATIC_SMALL_H, data_type_) &&
          cudnnGetRNNWeightSpaceSize(handle_.get(), persist_.get(), &bytes) ==
              CUDNN_STATUS_SUCCESS &&
          bytes == cudnn_weight_bytes()) {
        persist_available_ = same_table(
            low_ ? low_table_ : table_,
            cudnn::query_weight_table(handle_.get(), persist_.get(), spec, cudnn_weights(),
                                      cudnn_weight_bytes(), data_type_));
      }
    } catch (const DeviceError& e) {
      spdlog::info("cudnn sequence executor: persist_small_h unavailable ({})", e.what());
    }
    if (!persist_available_)
      spdlog::info(
          "cudnn sequence executor: persist_small_h not accepted for this core, using "
          "standard");
  }
  sync();
}

CudnnSequenceExecutor::~CudnnSequenceExecutor() = default;

void CudnnSequenceExecutor::use_device() const {
  CUDA_CHECK(cudaSetDevice(options_.device));
}

void CudnnSequenceExecutor::configure_low_precision() {
  const CoreSpec& s = spec();
  low_type_ =
      options_.data == RnnData::kFp16 ? kernels::LowFloat::kHalf : kernels::LowFloat::kBfloat16;
  gradient_scale_ = options_.data == RnnData::kFp16 ? kFp16GradientScale : 1.0f;
  // cuDNN's RNN takes bfloat16 data since 9.13 (PyTorch enables it from that version, PR
  // #164411); an older cuDNN is named here rather than by a refusal further down.
  if (options_.data == RnnData::kBf16 && cudnnGetVersion() < kCudnnBf16RnnVersion)
    throw DeviceError(fmt::format(
        "device.cudnn_data = bf16 needs cuDNN 9.13 or later for RNNs; this is cuDNN {}. Set "
        "device.cudnn_data: fp16 or fp32.",
        cudnnGetVersion()));
  size_t n16 = 0;
  try {
    const bool configured = configure(standard_, CUDNN_RNN_ALGO_STANDARD, data_type_);
    RECUR_ASSERT(configured);
    CUDNN_CHECK(cudnnGetRNNWeightSpaceSize(handle_.get(), standard_.get(), &low_weight_bytes_));
    RECUR_ASSERT(low_weight_bytes_ > 0 && low_weight_bytes_ % sizeof(uint16_t) == 0);
    n16 = low_weight_bytes_ / sizeof(uint16_t);
    w16_.resize(n16);
    dw16_.resize(n16);
    low_table_ = cudnn::query_weight_table(handle_.get(), standard_.get(), s, w16_.data(),
                                           low_weight_bytes_, data_type_);
  } catch (const DeviceError& e) {
    throw DeviceError(fmt::format(
        "device.cudnn_data = {}: cuDNN {} refused an RNN with {} data for this core ({}): {}. "
        "Set device.cudnn_data: fp32 (or try the other 16-bit type).",
        to_string(options_.data), cudnnGetVersion(), to_string(options_.data), to_string(s.cell),
        e.what()));
  }
  // The 16-bit layout is asked of cuDNN, like the fp32 one, and checked the same way; the index
  // says which master element each 16-bit element copies (-1: a gap, kept at zero).
  const std::vector<int64_t> index = conversion_index(layout_, opaque_layout(s, low_table_));
  RECUR_ASSERT(index.size() == n16);
  d_low_index_.resize(n16);
  d_low_index_.upload(index, stream());
  w16_.zero(stream());
  dw16_.zero(stream());
}

void CudnnSequenceExecutor::check(cudnnStatus_t status, const char* call) const {
  if (status == CUDNN_STATUS_SUCCESS) return;
  // Only a refusal (NOT_SUPPORTED, BAD_PARAM) may be the 16-bit data's doing; other failures
  // (memory, execution) are reported as they are.
  if (!low_ || !refused(status)) CUDNN_CHECK(status);
  throw DeviceError(fmt::format(
      "{}: {} (device.cudnn_data = {}: cuDNN {} may not run this core's RNN on 16-bit data on "
      "this GPU; set device.cudnn_data: fp32)",
      call, cudnnGetErrorString(status), to_string(options_.data), cudnnGetVersion()));
}

bool CudnnSequenceExecutor::configure(const cudnn::RnnDescriptor& desc, cudnnRNNAlgo_t algo,
                                      cudnnDataType_t type) {
  const CoreSpec& s = spec();
  // 16-bit data: float math on tensor cores. fp32 data: the math options_.math asks for.
  const cudnnMathType_t math =
      type == CUDNN_DATA_FLOAT ? math_type(options_.math) : CUDNN_TENSOR_OP_MATH;
  const cudnnStatus_t status = cudnnSetRNNDescriptor_v8(
      desc.get(), algo, cell_mode(s.cell), CUDNN_RNN_DOUBLE_BIAS, CUDNN_UNIDIRECTIONAL,
      CUDNN_LINEAR_INPUT, type, CUDNN_DATA_FLOAT, math, s.input, s.hidden, /*projSize=*/s.hidden,
      s.layers, dropout_.get(), CUDNN_RNN_PADDED_IO_ENABLED);
  if (algo != CUDNN_RNN_ALGO_STANDARD && refused(status)) return false;
  CUDNN_CHECK(status);
  if (s.cell == CellType::kLstm && s.cell_clip > 0) {
    const double clip = s.cell_clip;
    const cudnnStatus_t clip_status =
        cudnnRNNSetClip_v9(desc.get(), CUDNN_RNN_CLIP_MINMAX, -clip, clip);
    if (algo != CUDNN_RNN_ALGO_STANDARD && refused(clip_status)) return false;
    CUDNN_CHECK(clip_status);
  }
  return true;
}

cudnnRNNDescriptor_t CudnnSequenceExecutor::descriptor(RnnAlgo algo) const {
  return algo == RnnAlgo::kPersistSmallH ? persist_.get() : standard_.get();
}

// A refusal at (T, N) stands for every larger N at that T: the persistent kernels hold the whole
// batch on chip, so a larger batch needs more of it. (Assumed, and only speed depends on it: a
// batch wrongly taken for refused runs STANDARD.) A learner's N changes with every minibatch's
// cuts; without this each new N would be refused, and logged, once.
bool CudnnSequenceExecutor::persist_refused(int max_length, int count) const {
  return std::any_of(persist_refused_.begin(), persist_refused_.end(),
                     [&](const auto& r) { return r.first == max_length && r.second <= count; });
}

void CudnnSequenceExecutor::refuse_persist(int max_length, int count, const char* where) {
  const bool first = std::none_of(persist_refused_.begin(), persist_refused_.end(),
                                  [&](const auto& r) { return r.first == max_length; });
  std::erase_if(persist_refused_,
                [&](const auto& r) { return r.first == max_length && r.second >= count; });
  persist_refused_.emplace_back(max_length, count);
  spdlog::log(first ? spdlog::level::info : spdlog::level::debug,
              "cudnn sequence executor: persist_small_h refused in {} for T {} x N {}, using "
              "standard for this T and N >= {}",
              where, max_length, count, count);
}

bool CudnnSequenceExecutor::persist_eligible() const {
  return persist_available_ && (plan_.equal_lengths() || full_length_) &&
         !persist_refused(plan_.max_length, plan_.count);
}

bool CudnnSequenceExecutor::run_forward(RnnAlgo algo) {
  const bool persist = algo == RnnAlgo::kPersistSmallH;
  const bool lstm = has_cell_state(spec().cell);
  cudnnRNNDescriptor_t desc = descriptor(algo);
  size_t work = 0, reserve = 0;
  const cudnnStatus_t size_status = cudnnGetRNNTempSpaceSizes(
      handle_.get(), desc, CUDNN_FWD_MODE_TRAINING, x_desc_.get(), &work, &reserve);
  if (persist && size_status != CUDNN_STATUS_SUCCESS) {
    spdlog::info("cudnn sequence executor: persist_small_h temp-space query: {}",
                 cudnnGetErrorString(size_status));
    return false;
  }
  check(size_status, "cudnnGetRNNTempSpaceSizes");
  work_.reserve(work);
  reserve_.reserve(reserve);
  work_bytes_ = work;
  reserve_bytes_ = reserve;
  const cudnnStatus_t status = cudnnRNNForward(
      handle_.get(), desc, CUDNN_FWD_MODE_TRAINING, d_lengths_.data(), x_desc_.get(),
      io(d_x_pad_, x16_), y_desc_.get(), io(d_y_pad_, y16_), h_desc_.get(), io(d_hx_, hx16_),
      io(d_hy_, hy16_), h_desc_.get(), lstm ? io(d_cx_, cx16_) : nullptr,
      lstm ? io(d_cy_, cy16_) : nullptr, cudnn_weight_bytes(), cudnn_weights(), work_bytes_,
      work_.data(), reserve_bytes_, reserve_.data());
  if (persist && refused(status)) {
    spdlog::info("cudnn sequence executor: persist_small_h forward: {}",
                 cudnnGetErrorString(status));
    return false;
  }
  check(status, "cudnnRNNForward");
  return true;
}

void CudnnSequenceExecutor::load_impl(const CanonicalWeights& weights) {
  const std::vector<float> flat = flatten(weights);
  scatter_canonical(layout_, flat, host_w_.span());  // zeroes gaps
  use_device();
  w_.upload(host_w_.span(), stream());
  sync();
}

CanonicalWeights CudnnSequenceExecutor::weights_impl() const {
  // The host mirror is the truth (forward uploads it), unless the device copy is.
  refresh_mirrors();
  std::vector<float> flat(layout_.position.size());
  gather_canonical(layout_, std::span<const float>(host_w_.data(), host_w_.size()), flat);
  return unflatten(spec(), flat);
}

CanonicalWeights CudnnSequenceExecutor::gradients_impl() const {
  refresh_mirrors();
  std::vector<float> flat(layout_.position.size());
  gather_canonical(layout_, std::span<const float>(host_dw_.data(), host_dw_.size()), flat);
  return unflatten(spec(), flat);
}

void CudnnSequenceExecutor::zero_gradients_impl() {
  std::fill_n(host_dw_.data(), host_dw_.size(), 0.0f);
  use_device();
  dw_.zero(stream());
  sync();
}

void CudnnSequenceExecutor::set_gradient_scale(float scale) {
  // A power of two: scaling and unscaling are then exact, as cast_backward_outputs assumes.
  int exponent = 0;
  RECUR_CHECK_ARG(scale >= 1.0f && std::frexp(scale, &exponent) == 0.5f,
                  "cudnn sequence executor: gradient scale {} (a power of two >= 1)", scale);
  if (options_.data == RnnData::kFp16) gradient_scale_ = scale;
}

void CudnnSequenceExecutor::set_device_resident(bool on) {
  RECUR_CHECK_ARG(!have_forward_, "set_device_resident: choose the mode before the first forward");
  if (on && !device_resident_) {
    // The mirrors held the truth until now: the device copies take over from them.
    use_device();
    w_.upload(host_w_.span(), stream());
    dw_.upload(host_dw_.span(), stream());
    sync();
  }
  device_resident_ = on;
}

void CudnnSequenceExecutor::sync() const {
  CUDA_CHECK(cudaStreamSynchronize(stream()));
}

void CudnnSequenceExecutor::refresh_mirrors() const {
  if (!device_resident_) return;
  use_device();
  w_.download(host_w_.span(), stream());
  dw_.download(host_dw_.span(), stream());
  sync();
}

void CudnnSequenceExecutor::stage_forward(int T, int B, std::span<const uint8_t> episode_start,
                                          std::span<const float> initial_state, bool full_length,
                                          const DeviceStateTable* device_states) {
  use_device();
  cudaStream_t st = stream();
  // This call's pinned slot is rewritten now: the uploads out of it (two calls ago) must be
  // done. pin_state_ (the host initial states) has one slot: the last call's uploads too.
  slot_ ^= 1;
  staged_[slot_].synchronize();
  if (device_states == nullptr) staged_[slot_ ^ 1].synchronize();
  plan_sequences_into(plan_, T, B, episode_start);
  have_forward_ = false;  // the kept state is being replaced
  const CoreSpec& s = spec();
  const bool lstm = has_cell_state(s.cell);
  const int N = plan_.count, M = plan_.max_length, L = s.layers, H = s.hidden, in = s.input;
  const auto S = static_cast<size_t>(s.state_size());
  const size_t tb = static_cast<size_t>(T) * B, rows = static_cast<size_t>(M) * N;
  const size_t lnh = static_cast<size_t>(L) * N * H;

  // Cut sub-sequences run on to M where that lets the persistent algorithm take the batch (the
  // header note: exact for the device path); otherwise cuDNN gets their true lengths. Not for
  // the ReLU RNN: its state is unbounded, and a padded step's state grown to infinity would
  // turn the zero gradient through it into NaN (0 x inf) in the weight gradients.
  full_length_ = full_length && persist_available_ && s.cell != CellType::kRnnRelu &&
                 !plan_.equal_lengths() && !persist_refused(M, N);
  if (full_length_)
    cudnn_lengths_.assign(static_cast<size_t>(N), M);
  else
    cudnn_lengths_.assign(plan_.lengths.begin(), plan_.lengths.end());

  // Descriptors of this batch's shape: x/y (M, N, in|H) padded, h/c (L, N, H).
  x_desc_.set_seq_major_padded(M, in, cudnn_lengths_, data_type_);
  y_desc_.set_seq_major_padded(M, H, cudnn_lengths_, data_type_);
  h_desc_.set_packed_3d(L, N, H, data_type_);

  // Device buffers grow to the largest shape seen (no allocation for repeated shapes).
  d_x_.reserve(tb * in);
  d_x_pad_.reserve(rows * in);
  d_y_.reserve(tb * H);
  d_y_pad_.reserve(rows * H);
  d_hx_.reserve(lnh);
  d_hy_.reserve(lnh);
  if (lstm) {
    d_cx_.reserve(lnh);
    d_cy_.reserve(lnh);
  }
  if (low_) {
    x16_.reserve(rows * in);
    y16_.reserve(rows * H);
    hx16_.reserve(lnh);
    hy16_.reserve(lnh);
    if (lstm) {
      cx16_.reserve(lnh);
      cy16_.reserve(lnh);
    }
  }
  d_lengths_.reserve(static_cast<size_t>(N));
  d_padded_row_.reserve(tb);
  d_source_row_.reserve(rows);

  // Stage and upload: the index arrays [lengths (N) | padded_row (T*B) | source_row (M*N)], and
  // with device states [state_row (N)].
  const size_t state_rows = device_states ? static_cast<size_t>(N) : 0;
  kernels::PinnedBuffer<int32_t>& pin_index = pin_index_[slot_];
  pin_index.reserve(static_cast<size_t>(N) + tb + rows + state_rows);
  int32_t* idx = pin_index.data();
  std::copy(cudnn_lengths_.begin(), cudnn_lengths_.end(), idx);
  std::copy(plan_.padded_row.begin(), plan_.padded_row.end(), idx + N);
  std::copy(plan_.source_row.begin(), plan_.source_row.end(), idx + N + tb);
  d_lengths_.upload({idx, static_cast<size_t>(N)}, st);
  d_padded_row_.upload({idx + N, tb}, st);
  d_source_row_.upload({idx + N + tb, rows}, st);

  if (device_states) {
    // hx, cx gathered on the device: sub-sequence n starts from table row rows[initial_row[n]]
    // (kernels/state_gather.h), the same values the host assembly below copies.
    int32_t* state_row = idx + N + tb + rows;
    for (int n = 0; n < N; ++n) {
      const int32_t b = plan_.initial_row[static_cast<size_t>(n)];
      state_row[n] = b >= 0 ? device_states->rows[static_cast<size_t>(b)] : -1;
    }
    d_state_row_.reserve(static_cast<size_t>(N));
    d_state_row_.upload({state_row, static_cast<size_t>(N)}, st);
    staged_[slot_].record(st);
    kernels::launch_gather_initial_states(device_states->table, device_states->stride,
                                          d_state_row_.data(), N, L, H, d_hx_.data(),
                                          lstm ? d_cx_.data() : nullptr, st);
    if (!device_resident_) w_.upload(host_w_.span(), st);
    return;
  }

  // hx, cx (L, N, H) from initial_state (B, S) = [h of layers | c of layers] per env; zeros for
  // sub-sequences that start an episode (initial_row = -1).
  pin_state_.reserve(2 * lnh);
  float* hx = pin_state_.data();
  float* cx = hx + lnh;
  for (int k = 0; k < L; ++k)
    for (int n = 0; n < N; ++n) {
      const int32_t b = plan_.initial_row[static_cast<size_t>(n)];
      const size_t dst = (static_cast<size_t>(k) * N + n) * H;
      const float* src = b >= 0 ? initial_state.data() + static_cast<size_t>(b) * S : nullptr;
      for (int j = 0; j < H; ++j) {
        hx[dst + j] = src ? src[k * H + j] : 0.0f;
        if (lstm) cx[dst + j] = src ? src[(L + k) * H + j] : 0.0f;
      }
    }
  d_hx_.upload({hx, lnh}, st);
  if (lstm) d_cx_.upload({cx, lnh}, st);
  staged_[slot_].record(st);

  // The parameters as the optimizer left them in the host mirror (host-mirror mode).
  if (!device_resident_) w_.upload(host_w_.span(), st);
}

void CudnnSequenceExecutor::run_staged_forward(const float* x, float* y) {
  cudaStream_t st = stream();
  const size_t tb = static_cast<size_t>(plan_.T) * plan_.B;
  const size_t rows = static_cast<size_t>(plan_.max_length) * plan_.count;
  // x -> padded layout (zeros in the padding), then one cuDNN call.
  kernels::launch_gather_rows(x, d_x_pad_.data(), d_source_row_.data(), static_cast<int>(rows),
                              spec().input, st);
  if (low_) cast_forward_inputs();
  RnnAlgo algo = RnnAlgo::kStandard;
  if (persist_eligible()) {
    if (run_forward(RnnAlgo::kPersistSmallH)) {
      algo = RnnAlgo::kPersistSmallH;
    } else {
      refuse_persist(plan_.max_length, plan_.count, "forward");
    }
  }
  if (algo == RnnAlgo::kStandard) {
    const bool ran = run_forward(RnnAlgo::kStandard);  // STANDARD errors throw
    RECUR_ASSERT(ran);
  }
  last_algo_ = algo;
  reserve_spent_ = false;
  if (low_) cast_forward_outputs();
  // y back to (T, B, H).
  kernels::launch_gather_rows(d_y_pad_.data(), y, d_padded_row_.data(), static_cast<int>(tb),
                              spec().hidden, st);
}

void CudnnSequenceExecutor::cast_forward_inputs() {
  cudaStream_t st = stream();
  const CoreSpec& s = spec();
  const size_t rows = static_cast<size_t>(plan_.max_length) * plan_.count;
  const size_t lnh = static_cast<size_t>(s.layers) * plan_.count * s.hidden;
  kernels::launch_to_low_float(d_x_pad_.data(), x16_.data(), rows * s.input, 1.0f, low_type_, st);
  kernels::launch_to_low_float(d_hx_.data(), hx16_.data(), lnh, 1.0f, low_type_, st);
  if (has_cell_state(s.cell))
    kernels::launch_to_low_float(d_cx_.data(), cx16_.data(), lnh, 1.0f, low_type_, st);
  // The weights as the optimizer left them (every forward: they change between calls).
  kernels::launch_gather_to_low_float(w_.data(), w16_.data(), d_low_index_.data(), w16_.size(),
                                      low_type_, st);
}

void CudnnSequenceExecutor::cast_forward_outputs() {
  cudaStream_t st = stream();
  const CoreSpec& s = spec();
  const size_t rows = static_cast<size_t>(plan_.max_length) * plan_.count;
  const size_t lnh = static_cast<size_t>(s.layers) * plan_.count * s.hidden;
  kernels::launch_from_low_float(y16_.data(), d_y_pad_.data(), rows * s.hidden, 1.0f, low_type_,
                                 st);
  kernels::launch_from_low_float(hy16_.data(), d_hy_.data(), lnh, 1.0f, low_type_, st);
  if (has_cell_state(s.cell))
    kernels::launch_from_low_float(cy16_.data(), d_cy_.data(), lnh, 1.0f, low_type_, st);
}

void CudnnSequenceExecutor::cast_backward_outputs(bool want_dx, bool want_state_grads) {
  cudaStream_t st = stream();
  const CoreSpec& s = spec();
  const size_t rows = static_cast<size_t>(plan_.max_length) * plan_.count;
  const size_t lnh = static_cast<size_t>(s.layers) * plan_.count * s.hidden;
  const float unscale = 1.0f / gradient_scale_;  // a power of two: exact
  if (want_dx)
    kernels::launch_from_low_float(dx16_.data(), d_dx_pad_.data(), rows * s.input, unscale,
                                   low_type_, st);
  if (want_state_grads) {
    kernels::launch_from_low_float(dhx16_.data(), d_dhx_.data(), lnh, unscale, low_type_, st);
    if (has_cell_state(s.cell))
      kernels::launch_from_low_float(dcx16_.data(), d_dcx_.data(), lnh, unscale, low_type_, st);
  }
  kernels::launch_scatter_add_from_low_float(dw16_.data(), dw_.data(), d_low_index_.data(),
                                             dw16_.size(), unscale, low_type_, st);
}

void CudnnSequenceExecutor::forward_impl(int T, int B, std::span<const float> x,
                                         std::span<const uint8_t> episode_start,
                                         std::span<const float> initial_state, std::span<float> y,
                                         std::span<float> final_state) {
  // Cut sub-sequences may run on over their padding unless their final states are asked for.
  stage_forward(T, B, episode_start, initial_state, /*full_length=*/final_state.empty());
  cudaStream_t st = stream();
  const CoreSpec& s = spec();
  const bool lstm = has_cell_state(s.cell);
  const int N = plan_.count, L = s.layers, H = s.hidden, in = s.input;
  const auto S = static_cast<size_t>(s.state_size());
  const size_t tb = static_cast<size_t>(T) * B;
  const size_t lnh = static_cast<size_t>(L) * N * H;

  // x (T, B, in)
  pin_in_.reserve(tb * in);
  std::copy(x.begin(), x.end(), pin_in_.data());
  d_x_.upload({pin_in_.data(), tb * in}, st);
  run_staged_forward(d_x_.data(), d_y_.data());

  // y to the host; final states from hy/cy rows final_sub.
  pin_out_.reserve(tb * H);
  d_y_.download({pin_out_.data(), tb * H}, st);
  float* hy = pin_state_.data();  // stream order: after the hx/cx uploads above
  float* cy = hy + lnh;
  if (!final_state.empty()) {
    d_hy_.download({hy, lnh}, st);
    if (lstm) d_cy_.download({cy, lnh}, st);
  }
  sync();
  have_forward_ = true;

  std::copy_n(pin_out_.data(), tb * H, y.begin());
  if (!final_state.empty()) {
    for (int b = 0; b < B; ++b) {
      const auto n = static_cast<size_t>(plan_.final_sub[static_cast<size_t>(b)]);
      float* dst = final_state.data() + static_cast<size_t>(b) * S;
      for (int k = 0; k < L; ++k) {
        const size_t src = (static_cast<size_t>(k) * N + n) * H;
        std::copy_n(hy + src, H, dst + k * H);
        if (lstm) std::copy_n(cy + src, H, dst + (L + k) * H);
      }
    }
  }
}

void CudnnSequenceExecutor::forward_device_impl(int T, int B, const float* x,
                                                std::span<const uint8_t> episode_start,
                                                std::span<const float> initial_state,
                                                const DeviceStateTable* table, float* y) {
  // No final state and no initial-state gradient leave this path: cut sub-sequences may run on
  // over their padding (the header note).
  stage_forward(T, B, episode_start, initial_state, /*full_length=*/true, table);
  run_staged_forward(x, y);
  have_forward_ = true;
}

void CudnnSequenceExecutor::run_staged_backward(const float* dy, float* dx, bool want_state_grads) {
  cudaStream_t st = stream();
  const CoreSpec& s = spec();
  const bool lstm = has_cell_state(s.cell);
  const int T = plan_.T, B = plan_.B;
  const int N = plan_.count, M = plan_.max_length, L = s.layers, H = s.hidden, in = s.input;
  const size_t tb = static_cast<size_t>(T) * B, rows = static_cast<size_t>(M) * N;
  const size_t lnh = static_cast<size_t>(L) * N * H;

  if (reserve_spent_) {
    // A repeated backward of one forward: restore the activations BackwardData overwrote (the
    // forward is deterministic: y, hy and cy are rewritten with the same values).
    const bool ran = run_forward(last_algo_);
    RECUR_ASSERT(ran);  // the same algorithm ran on the same shapes before
  }
  d_dy_pad_.reserve(rows * H);
  d_dx_pad_.reserve(rows * in);
  d_dhx_.reserve(lnh);
  if (lstm) d_dcx_.reserve(lnh);
  if (low_) {
    dy16_.reserve(rows * H);
    dx16_.reserve(rows * in);
    dhx16_.reserve(lnh);
    if (lstm) dcx16_.reserve(lnh);
  }

  // dy (T, B, H) -> padded (zeros in the padding: those outputs do not exist for the loss).
  kernels::launch_gather_rows(dy, d_dy_pad_.data(), d_source_row_.data(), static_cast<int>(rows), H,
                              st);
  if (low_) {
    // This batch's weight gradients alone go to the 16-bit dw; cast_backward_outputs adds them
    // to the fp32 dw.
    kernels::launch_to_low_float(d_dy_pad_.data(), dy16_.data(), rows * H, gradient_scale_,
                                 low_type_, st);
    dw16_.zero(st);
  }

  // BackwardData must come first (it updates the reserve space BackwardWeights reads). NULL
  // dhy/dcy: no gradient flows into the final state.
  auto backward_data = [&](cudnnRNNDescriptor_t desc) {
    return cudnnRNNBackwardData_v8(
        handle_.get(), desc, d_lengths_.data(), y_desc_.get(), io(d_y_pad_, y16_),
        io(d_dy_pad_, dy16_), x_desc_.get(), io(d_dx_pad_, dx16_), h_desc_.get(), io(d_hx_, hx16_),
        nullptr, io(d_dhx_, dhx16_), h_desc_.get(), lstm ? io(d_cx_, cx16_) : nullptr, nullptr,
        lstm ? io(d_dcx_, dcx16_) : nullptr, cudnn_weight_bytes(), cudnn_weights(), work_bytes_,
        work_.data(), reserve_bytes_, reserve_.data());
  };
  // Weight-space pair before the workspace pair (the C signature's order).
  auto backward_weights = [&](cudnnRNNDescriptor_t desc) {
    return cudnnRNNBackwardWeights_v8(handle_.get(), desc, CUDNN_WGRAD_MODE_ADD, d_lengths_.data(),
                                      x_desc_.get(), io(d_x_pad_, x16_), h_desc_.get(),
                                      io(d_hx_, hx16_), y_desc_.get(), io(d_y_pad_, y16_),
                                      cudnn_weight_bytes(), cudnn_gradients(), work_bytes_,
                                      work_.data(), reserve_bytes_, reserve_.data());
  };
  cudnnStatus_t status = backward_data(descriptor(last_algo_));
  if (status == CUDNN_STATUS_SUCCESS) status = backward_weights(descriptor(last_algo_));
  if (last_algo_ == RnnAlgo::kPersistSmallH && refused(status)) {
    spdlog::info("cudnn sequence executor: persist_small_h backward: {}",
                 cudnnGetErrorString(status));
    // Redo the forward with STANDARD (its own reserve space), then its backward. x_pad still
    // holds this batch's input (only BackwardData wrote elsewhere).
    refuse_persist(M, N, "backward");
    const bool ran = run_forward(RnnAlgo::kStandard);
    RECUR_ASSERT(ran);
    last_algo_ = RnnAlgo::kStandard;
    if (low_) dw16_.zero(st);  // whatever the refused call may have added
    status = backward_data(standard_.get());
    if (status == CUDNN_STATUS_SUCCESS) status = backward_weights(standard_.get());
  }
  check(status, "cudnnRNNBackwardData_v8 / cudnnRNNBackwardWeights_v8");
  reserve_spent_ = true;
  if (low_) cast_backward_outputs(dx != nullptr, want_state_grads);

  // dx back to (T, B, in).
  if (dx != nullptr)
    kernels::launch_gather_rows(d_dx_pad_.data(), dx, d_padded_row_.data(), static_cast<int>(tb),
                                in, st);
}

void CudnnSequenceExecutor::backward_device_impl(const float* dy, float* dx) {
  RECUR_CHECK_ARG(have_forward_, "backward_device: no complete forward to differentiate");
  use_device();
  run_staged_backward(dy, dx, /*want_state_grads=*/false);  // the device path never reads them
}

void CudnnSequenceExecutor::backward_impl(std::span<const float> dy, std::span<float> dx,
                                          std::span<float> d_initial_state) {
  RECUR_CHECK_ARG(have_forward_, "backward: the last forward did not complete (it threw)");
  use_device();
  cudaStream_t st = stream();
  const CoreSpec& s = spec();
  const bool lstm = has_cell_state(s.cell);
  const int T = plan_.T, B = plan_.B;
  const int N = plan_.count, L = s.layers, H = s.hidden, in = s.input;
  const auto S = static_cast<size_t>(s.state_size());
  const size_t tb = static_cast<size_t>(T) * B;
  const size_t lnh = static_cast<size_t>(L) * N * H;

  pin_out_.reserve(tb * H);
  std::copy(dy.begin(), dy.end(), pin_out_.data());
  d_y_.upload({pin_out_.data(), tb * H}, st);  // d_y_ is free after forward: holds dy now
  // The host gradient mirror is the truth: cuDNN ADDs this batch's gradients onto it.
  if (!device_resident_) dw_.upload(host_dw_.span(), st);
  run_staged_backward(d_y_.data(), dx.empty() ? nullptr : d_x_.data(), !d_initial_state.empty());

  // dx and d_initial_state (from dhx/dcx rows per initial_row) to the host; dw to the mirror.
  if (!dx.empty()) {
    pin_in_.reserve(tb * in);
    d_x_.download({pin_in_.data(), tb * in}, st);
  }
  pin_state_.reserve(2 * lnh);
  float* dhx = pin_state_.data();
  float* dcx = dhx + lnh;
  if (!d_initial_state.empty()) {
    d_dhx_.download({dhx, lnh}, st);
    if (lstm) d_dcx_.download({dcx, lnh}, st);
  }
  if (!device_resident_) dw_.download(host_dw_.span(), st);
  sync();

  if (!dx.empty()) std::copy_n(pin_in_.data(), tb * in, dx.begin());
  if (!d_initial_state.empty()) {
    // Envs whose first step starts an episode get zeros: their initial state is not used.
    std::fill(d_initial_state.begin(), d_initial_state.end(), 0.0f);
    for (int n = 0; n < N; ++n) {
      const int32_t b = plan_.initial_row[static_cast<size_t>(n)];
      if (b < 0) continue;
      float* dst = d_initial_state.data() + static_cast<size_t>(b) * S;
      for (int k = 0; k < L; ++k) {
        const size_t src = (static_cast<size_t>(k) * N + static_cast<size_t>(n)) * H;
        std::copy_n(dhx + src, H, dst + k * H);
        if (lstm) std::copy_n(dcx + src, H, dst + (L + k) * H);
      }
    }
  }
}

}  // namespace recur::policy
