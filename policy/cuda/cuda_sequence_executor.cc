// The fused CUDA sequence executor (see cuda_sequence_executor.h).
#include "policy/cuda/cuda_sequence_executor.h"

#include <algorithm>

#include "core/error.h"
#include "kernels/elementwise.h"
#include "kernels/sequence_cells.h"
#include "kernels/state_gather.h"
#include "policy/cudnn/cudnn_sequence_executor.h"

namespace recur::policy {
namespace {

// As the other cuBLAS users: a preallocated workspace, so that cuBLAS never allocates mid-call.
constexpr size_t kCublasWorkspaceBytes = size_t{8} << 20;
constexpr float kOne = 1.0f;

// Refuses a cell it lacks and selects the device before any member is created on it.
int select_device(const CoreSpec& spec, int device) {
  RECUR_CHECK(spec.cell == CellType::kLstmLn || is_mingru(spec.cell),
              "the fused CUDA sequence executor runs lstm_ln, mingru and mingru_highway; '{}' runs "
              "on cuDNN's RNN (make_device_sequence chooses)",
              to_string(spec.cell));
  RECUR_CHECK_ARG(device >= 0, "CudaSequenceExecutor: device {} is not a CUDA device ordinal",
                  device);
  CUDA_CHECK(cudaSetDevice(device));
  return device;
}

// Row-major GEMMs through cuBLAS's column-major calls. W is (out, in) row-major, as canonical.
// y (rows, out) = x (rows, in) W^T + beta y
void gemm_x_wt(cublasHandle_t h, int rows, int out, int in, const float* x, const float* w,
               float beta, float* y) {
  CUBLAS_CHECK(
      cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, out, rows, in, &kOne, w, in, x, in, &beta, y, out));
}
// dx (rows, in) = dy (rows, out) W + beta dx
void gemm_dy_w(cublasHandle_t h, int rows, int out, int in, const float* dy, const float* w,
               float beta, float* dx) {
  CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, in, rows, out, &kOne, w, in, dy, out, &beta,
                           dx, in));
}
// dW (out, in) += dy (rows, out)^T x (rows, in)
void gemm_dw(cublasHandle_t h, int rows, int out, int in, const float* dy, const float* x,
             float* dw) {
  CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, in, out, rows, &kOne, x, in, dy, out, &kOne,
                           dw, in));
}

}  // namespace

std::unique_ptr<DeviceSequenceExecutor> make_device_sequence(const CoreSpec& spec,
                                                             const CudnnSequenceOptions& options,
                                                             cudaStream_t stream) {
  if (spec.cell == CellType::kLstmLn || is_mingru(spec.cell))
    return std::make_unique<CudaSequenceExecutor>(spec, options.device, stream);
  return std::make_unique<CudnnSequenceExecutor>(spec, options, stream);
}

CudaSequenceExecutor::CudaSequenceExecutor(const CoreSpec& spec, int device, cudaStream_t stream)
    : DeviceSequenceExecutor(spec), device_(select_device(spec, device)), external_stream_(stream) {
  cublas_ = std::make_unique<CublasHandle>(this->stream(), kCublasWorkspaceBytes);
  layout_ = canonical_layout(spec);
  const auto n = static_cast<size_t>(layout_.size);
  w_.resize(n);
  dw_.resize(n);
  host_w_.resize(n);
  host_dw_.resize(n);
  std::fill_n(host_w_.data(), n, 0.0f);
  std::fill_n(host_dw_.data(), n, 0.0f);
  w_.zero(this->stream());
  dw_.zero(this->stream());
  layers_.resize(static_cast<size_t>(spec.layers));
  sync();
}

CudaSequenceExecutor::~CudaSequenceExecutor() {
  // Nothing may still run on buffers about to be freed; errors cannot be reported here.
  static_cast<void>(cudaSetDevice(device_));
  static_cast<void>(cudaStreamSynchronize(stream()));
}

void CudaSequenceExecutor::use_device() const {
  CUDA_CHECK(cudaSetDevice(device_));
}

void CudaSequenceExecutor::sync() const {
  CUDA_CHECK(cudaStreamSynchronize(stream()));
}

void CudaSequenceExecutor::refresh_mirrors() const {
  if (!device_resident_) return;
  use_device();
  w_.download(host_w_.span(), stream());
  dw_.download(host_dw_.span(), stream());
  sync();
}

void CudaSequenceExecutor::set_device_resident(bool on) {
  RECUR_CHECK_ARG(!have_forward_, "set_device_resident: choose the mode before the first forward");
  if (on && !device_resident_) {
    use_device();
    w_.upload(host_w_.span(), stream());
    dw_.upload(host_dw_.span(), stream());
    sync();
  }
  device_resident_ = on;
}

void CudaSequenceExecutor::load_impl(const CanonicalWeights& weights) {
  const std::vector<float> flat = flatten(weights);  // the canonical order is this layout
  std::copy(flat.begin(), flat.end(), host_w_.data());
  use_device();
  w_.upload(host_w_.span(), stream());
  sync();
}

CanonicalWeights CudaSequenceExecutor::weights_impl() const {
  refresh_mirrors();
  return unflatten(spec(), std::span<const float>(host_w_.data(), host_w_.size()));
}

CanonicalWeights CudaSequenceExecutor::gradients_impl() const {
  refresh_mirrors();
  return unflatten(spec(), std::span<const float>(host_dw_.data(), host_dw_.size()));
}

void CudaSequenceExecutor::zero_gradients_impl() {
  std::fill_n(host_dw_.data(), host_dw_.size(), 0.0f);
  use_device();
  dw_.zero(stream());
  sync();
}

void CudaSequenceExecutor::stage(int T, int B, std::span<const uint8_t> episode_start,
                                 std::span<const float> initial_state,
                                 const DeviceStateTable* table) {
  use_device();
  cudaStream_t st = stream();
  const CoreSpec& s = spec();
  const bool lstm = has_cell_state(s.cell), normed = has_layer_norm(s.cell);
  const int H = s.hidden, L = s.layers, G = s.gates();
  const size_t tb = static_cast<size_t>(T) * B, bh = static_cast<size_t>(B) * H;
  const size_t lbh = static_cast<size_t>(L) * bh;
  // This call's pinned slot is rewritten now: the uploads out of it (two calls ago) must be done.
  slot_ ^= 1;
  staged_[slot_].synchronize();
  have_forward_ = false;
  t_ = T;
  b_ = B;

  // Buffers grow to the largest shape seen (no allocation for repeated shapes).
  x_.reserve(tb * static_cast<size_t>(s.input));
  starts_.reserve(tb);
  h0_.reserve(lbh);
  if (lstm) c0_.reserve(lbh);
  for (int k = 0; k < L; ++k) {
    Layer& ly = layers_[static_cast<size_t>(k)];
    ly.gates.reserve(tb * G * H);
    ly.h.reserve(tb * H);
    ly.h_prev.reserve(tb * H);
    if (lstm) {
      ly.c.reserve(tb * H);
      ly.c_prev.reserve(tb * H);
      ly.tanh_c.reserve(tb * H);
    }
    if (normed) {
      ly.xhat.reserve(tb * kNormGroups * H);
      ly.rstd.reserve(tb * kNormGroups);
    }
    if (has_layer_output(s.cell, k)) ly.out.reserve(tb * H);
  }

  pin_starts_[slot_].reserve(tb);
  std::copy(episode_start.begin(), episode_start.end(), pin_starts_[slot_].data());
  starts_.upload({pin_starts_[slot_].data(), tb}, st);
  if (table) {
    pin_rows_[slot_].reserve(static_cast<size_t>(B));
    std::copy(table->rows.begin(), table->rows.end(), pin_rows_[slot_].data());
    state_rows_.reserve(static_cast<size_t>(B));
    state_rows_.upload({pin_rows_[slot_].data(), static_cast<size_t>(B)}, st);
    kernels::launch_gather_initial_states(table->table, table->stride, state_rows_.data(), B, L, H,
                                          h0_.data(), lstm ? c0_.data() : nullptr, st);
  } else {
    // (B, S) = [h of layers | c of layers] per slot -> (L, B, H) for h and for c.
    const auto S = static_cast<size_t>(s.state_size());
    pin_state_[slot_].reserve(2 * lbh);
    float* h0 = pin_state_[slot_].data();
    float* c0 = h0 + lbh;
    for (int k = 0; k < L; ++k)
      for (int b = 0; b < B; ++b) {
        const float* src = initial_state.data() + static_cast<size_t>(b) * S;
        const size_t dst = (static_cast<size_t>(k) * B + b) * H;
        std::copy_n(src + static_cast<size_t>(k) * H, H, h0 + dst);
        if (lstm) std::copy_n(src + static_cast<size_t>(L + k) * H, H, c0 + dst);
      }
    h0_.upload({h0, lbh}, st);
    if (lstm) c0_.upload({c0, lbh}, st);
  }
  staged_[slot_].record(st);
  if (!device_resident_) w_.upload(host_w_.span(), st);
}

const float* CudaSequenceExecutor::layer_output(int k) const {
  const Layer& ly = layers_[static_cast<size_t>(k)];
  return has_layer_output(spec().cell, k) ? ly.out.data() : ly.h.data();
}

const float* CudaSequenceExecutor::layer_input(int k) const {
  return k == 0 ? x_.data() : layer_output(k - 1);
}

void CudaSequenceExecutor::run_forward(const float* x, float* y) {
  cudaStream_t st = stream();
  const CoreSpec& s = spec();
  const size_t tb = static_cast<size_t>(t_) * b_;
  if (x != x_.data())
    CUDA_CHECK(
        cudaMemcpyAsync(x_.data(), x, tb * s.input * sizeof(float), cudaMemcpyDeviceToDevice, st));
  for (int k = 0; k < s.layers; ++k) layer_forward(k);
  CUDA_CHECK(cudaMemcpyAsync(y, layer_output(s.layers - 1), tb * s.hidden * sizeof(float),
                             cudaMemcpyDeviceToDevice, st));
}

void CudaSequenceExecutor::layer_forward(int k) {
  cudaStream_t st = stream();
  cublasHandle_t cb = cublas_->get();
  const CoreSpec& s = spec();
  const int T = t_, B = b_, H = s.hidden, G = s.gates(), in = s.layer_input(k);
  const size_t tb = static_cast<size_t>(T) * B, bh = static_cast<size_t>(B) * H;
  Layer& ly = layers_[static_cast<size_t>(k)];
  const CanonicalOffsets o = canonical_offsets(s, k);
  const float* w = w_.data();
  // Input projection of all T*B rows: one GEMM (no bias: lstm_ln has none, minGRU's scan adds it).
  gemm_x_wt(cb, static_cast<int>(tb), G * H, in, layer_input(k), w + o.weight_ih, 0.0f,
            ly.gates.data());
  if (is_mingru(s.cell)) {
    kernels::MinGruScan a;
    a.T = T;
    a.B = B;
    a.H = H;
    a.G = G;
    a.zh = ly.gates.data();
    a.bias = w + o.bias_ih;
    a.starts = starts_.data();
    a.h0 = h0_.data() + static_cast<size_t>(k) * bh;
    a.h_prev = ly.h_prev.data();
    a.h = ly.h.data();
    kernels::launch_mingru_scan(a, st);
    if (has_highway_stack(s.cell)) {  // out_k = s h_k + (1 - s) out_{k-1}; out_{-1} = 0
      kernels::HighwayForward hw;
      hw.rows = static_cast<long long>(tb);
      hw.H = H;
      hw.gates = ly.gates.data();
      hw.bias_p = w + o.bias_ih + 2 * H;
      hw.h = ly.h.data();
      hw.below = k > 0 ? layer_input(k) : nullptr;
      hw.out = ly.out.data();
      kernels::launch_highway_forward(hw, st);
    } else if (k > 0) {  // residual stack: out_k = h_k + out_{k-1}
      kernels::launch_add(ly.h.data(), layer_input(k), static_cast<long long>(tb * H),
                          ly.out.data(), st);
    }
    return;
  }
  // lstm_ln: per step the effective previous state, the recurrent GEMM and the fused cell.
  for (int t = 0; t < T; ++t) {
    const size_t r = static_cast<size_t>(t) * bh;
    const float* h_src = t == 0 ? h0_.data() + static_cast<size_t>(k) * bh : ly.h.data() + r - bh;
    const float* c_src = t == 0 ? c0_.data() + static_cast<size_t>(k) * bh : ly.c.data() + r - bh;
    kernels::launch_masked_copy(h_src, c_src, starts_.data() + static_cast<size_t>(t) * B, B, H,
                                ly.h_prev.data() + r, ly.c_prev.data() + r, st);
    float* gates = ly.gates.data() + r * G;
    gemm_x_wt(cb, B, G * H, H, ly.h_prev.data() + r, w + o.weight_hh, 1.0f, gates);
    kernels::LnLstmStep a;
    a.batch = B;
    a.hidden = H;
    a.eps = s.norm_epsilon;
    a.gates = gates;
    a.c_prev = ly.c_prev.data() + r;
    a.c = ly.c.data() + r;
    a.h = ly.h.data() + r;
    a.xhat = ly.xhat.data() + r * kNormGroups;
    a.rstd = ly.rstd.data() + static_cast<size_t>(t) * B * kNormGroups;
    a.tanh_c = ly.tanh_c.data() + r;
    a.gain = w + o.norm_weight;
    a.shift = w + o.norm_bias;
    kernels::launch_ln_lstm_step(a, st);
  }
}

void CudaSequenceExecutor::run_backward(const float* dy, float* dx, bool want_initial) {
  cudaStream_t st = stream();
  const CoreSpec& s = spec();
  const size_t tb = static_cast<size_t>(t_) * b_;
  const size_t bh = static_cast<size_t>(b_) * s.hidden;
  const size_t lbh = static_cast<size_t>(s.layers) * bh;
  const int max_in = std::max(s.input, s.hidden);
  dgates_.reserve(tb * s.gates() * s.hidden);
  if (has_layer_norm(s.cell)) dnorm_.reserve(tb * kNormGroups * s.hidden);
  if (has_highway_stack(s.cell)) dskip_.reserve(tb * s.hidden);
  // The column sums' row ranges: minGRU's bias gradient (G H columns) or the layer-norm LSTM's
  // gain and shift gradients (5 H).
  const int sum_cols = (has_layer_norm(s.cell) ? kNormGroups : s.gates()) * s.hidden;
  sum_scratch_.reserve(kernels::column_sums_scratch(static_cast<int>(tb), sum_cols));
  // Both: they swap roles layer by layer, and layer 0's input may be wider than H.
  dh_out_.reserve(tb * max_in);
  din_.reserve(tb * max_in);
  dh_next_.reserve(bh);
  dh_prev_.reserve(bh);
  dc_next_.reserve(bh);
  dc_prev_.reserve(bh);
  if (want_initial) {
    dh0_.reserve(lbh);
    dc0_.reserve(lbh);
    dh0_.zero(st);
    dc0_.zero(st);
  }
  CUDA_CHECK(cudaMemcpyAsync(dh_out_.data(), dy, tb * s.hidden * sizeof(float),
                             cudaMemcpyDeviceToDevice, st));
  for (int k = s.layers - 1; k >= 0; --k) {
    const bool want_input = k > 0 || dx != nullptr;
    layer_backward(k, want_input, want_initial);
    if (!want_input) continue;
    // din holds d(input of layer k): the output gradient of layer k-1, or dx.
    if (k > 0) {
      std::swap(dh_out_, din_);
    } else {
      CUDA_CHECK(cudaMemcpyAsync(dx, din_.data(), tb * s.input * sizeof(float),
                                 cudaMemcpyDeviceToDevice, st));
    }
  }
}

void CudaSequenceExecutor::layer_backward(int k, bool want_input, bool want_initial) {
  cudaStream_t st = stream();
  cublasHandle_t cb = cublas_->get();
  const CoreSpec& s = spec();
  const int T = t_, B = b_, H = s.hidden, G = s.gates(), in = s.layer_input(k);
  const size_t tb = static_cast<size_t>(T) * B, bh = static_cast<size_t>(B) * H;
  const Layer& ly = layers_[static_cast<size_t>(k)];
  const CanonicalOffsets o = canonical_offsets(s, k);
  const float* w = w_.data();
  float* dw = dw_.data();
  if (is_mingru(s.cell)) {
    if (has_highway_stack(s.cell)) {  // d p, the skip's share; dh_out_ becomes d h (in place)
      kernels::HighwayBackward hw;
      hw.rows = static_cast<long long>(tb);
      hw.H = H;
      hw.gates = ly.gates.data();
      hw.h = ly.h.data();
      hw.below = k > 0 ? layer_input(k) : nullptr;
      hw.dout = dh_out_.data();
      hw.dgates = dgates_.data();
      hw.dskip = k > 0 ? dskip_.data() : nullptr;
      kernels::launch_highway_backward(hw, st);
    }
    kernels::MinGruScanGrad a;
    a.T = T;
    a.B = B;
    a.H = H;
    a.G = G;
    a.zh = ly.gates.data();
    a.starts = starts_.data();
    a.h_prev = ly.h_prev.data();
    a.dh_out = dh_out_.data();
    a.dzh = dgates_.data();
    a.dh0 = want_initial ? dh0_.data() + static_cast<size_t>(k) * bh : nullptr;
    kernels::launch_mingru_scan_grad(a, st);
    kernels::launch_column_sums(dgates_.data(), nullptr, static_cast<int>(tb), G * H,
                                dw + o.bias_ih, nullptr, sum_scratch_.data(), st);
  } else {
    dh_next_.zero(st);
    dc_next_.zero(st);
    for (int t = T - 1; t >= 0; --t) {
      const size_t r = static_cast<size_t>(t) * bh;
      float* dg = dgates_.data() + r * G;
      kernels::LnLstmStepGrad a;
      a.batch = B;
      a.hidden = H;
      a.act = ly.gates.data() + r * G;
      a.xhat = ly.xhat.data() + r * kNormGroups;
      a.rstd = ly.rstd.data() + static_cast<size_t>(t) * B * kNormGroups;
      a.tanh_c = ly.tanh_c.data() + r;
      a.c_prev = ly.c_prev.data() + r;
      a.gain = w + o.norm_weight;
      a.dh_out = dh_out_.data() + r;
      a.dh_next = dh_next_.data();
      a.dc_next = dc_next_.data();
      a.dnorm = dnorm_.data() + r * kNormGroups;
      a.dgates = dg;
      a.dc_prev = dc_prev_.data();
      kernels::launch_ln_lstm_step_grad(a, st);
      // dh_prev = dG W_hh; the weight gradient waits for all steps (one GEMM after the loop).
      gemm_dy_w(cb, B, G * H, H, dg, w + o.weight_hh, 0.0f, dh_prev_.data());
      kernels::launch_masked_copy(dh_prev_.data(), dc_prev_.data(),
                                  starts_.data() + static_cast<size_t>(t) * B, B, H,
                                  dh_next_.data(), dc_next_.data(), st);
    }
    if (want_initial) {  // the carry out of t = 0 is the initial state's gradient
      CUDA_CHECK(cudaMemcpyAsync(dh0_.data() + static_cast<size_t>(k) * bh, dh_next_.data(),
                                 bh * sizeof(float), cudaMemcpyDeviceToDevice, st));
      CUDA_CHECK(cudaMemcpyAsync(dc0_.data() + static_cast<size_t>(k) * bh, dc_next_.data(),
                                 bh * sizeof(float), cudaMemcpyDeviceToDevice, st));
    }
    gemm_dw(cb, static_cast<int>(tb), G * H, H, dgates_.data(), ly.h_prev.data(), dw + o.weight_hh);
    const int nw = kNormGroups * H;
    // The gains' gradient sum(dnorm xhat) and the shifts' sum(dnorm) in one pass over dnorm.
    kernels::launch_column_sums(dnorm_.data(), ly.xhat.data(), static_cast<int>(tb), nw,
                                dw + o.norm_weight, dw + o.norm_bias, sum_scratch_.data(), st);
  }
  // Input side, all T*B rows at once.
  gemm_dw(cb, static_cast<int>(tb), G * H, in, dgates_.data(), layer_input(k), dw + o.weight_ih);
  if (want_input) {
    gemm_dy_w(cb, static_cast<int>(tb), G * H, in, dgates_.data(), w + o.weight_ih, 0.0f,
              din_.data());
    // The skip path of a residual stack: d out_{k-1} gets d out_k unchanged; of a highway,
    // d out_k (1 - s) (dskip_).
    if (k > 0 && has_residual_stack(s.cell))
      kernels::launch_add_inplace(din_.data(), dh_out_.data(), static_cast<long long>(tb * H), st);
    if (k > 0 && has_highway_stack(s.cell))
      kernels::launch_add_inplace(din_.data(), dskip_.data(), static_cast<long long>(tb * H), st);
  }
}

void CudaSequenceExecutor::forward_impl(int T, int B, std::span<const float> x,
                                        std::span<const uint8_t> episode_start,
                                        std::span<const float> initial_state, std::span<float> y,
                                        std::span<float> final_state) {
  stage(T, B, episode_start, initial_state, nullptr);
  cudaStream_t st = stream();
  const CoreSpec& s = spec();
  const bool lstm = has_cell_state(s.cell);
  const int H = s.hidden, L = s.layers;
  const size_t tb = static_cast<size_t>(T) * B, bh = static_cast<size_t>(B) * H;
  const auto S = static_cast<size_t>(s.state_size());
  pin_io_.reserve(std::max(tb * s.input, tb * H + 2 * L * bh));
  std::copy(x.begin(), x.end(), pin_io_.data());
  x_.upload({pin_io_.data(), tb * s.input}, st);
  sync();  // pin_io_ is reused for the results below
  dy_.reserve(tb * H);
  run_forward(x_.data(), dy_.data());  // dy_ is free until backward: y goes through it
  float* host_y = pin_io_.data();
  float* host_h = host_y + tb * H;  // last step's h (and c) of every layer, (L, B, H) each
  float* host_c = host_h + L * bh;
  dy_.download({host_y, tb * H}, st);
  const size_t last = static_cast<size_t>(T - 1) * bh;
  for (int k = 0; k < L && !final_state.empty(); ++k) {
    const Layer& ly = layers_[static_cast<size_t>(k)];
    ly.h.download({host_h + k * bh, bh}, st, last);
    if (lstm) ly.c.download({host_c + k * bh, bh}, st, last);
  }
  sync();
  have_forward_ = true;
  std::copy_n(host_y, tb * H, y.begin());
  if (!final_state.empty())
    for (int b = 0; b < B; ++b)
      for (int k = 0; k < L; ++k) {
        float* dst = final_state.data() + static_cast<size_t>(b) * S;
        std::copy_n(host_h + k * bh + static_cast<size_t>(b) * H, H, dst + k * H);
        if (lstm) std::copy_n(host_c + k * bh + static_cast<size_t>(b) * H, H, dst + (L + k) * H);
      }
}

void CudaSequenceExecutor::forward_device_impl(int T, int B, const float* x,
                                               std::span<const uint8_t> episode_start,
                                               std::span<const float> initial_state,
                                               const DeviceStateTable* table, float* y) {
  stage(T, B, episode_start, initial_state, table);
  run_forward(x, y);
  have_forward_ = true;
}

void CudaSequenceExecutor::backward_device_impl(const float* dy, float* dx) {
  RECUR_CHECK_ARG(have_forward_, "backward_device: no complete forward to differentiate");
  use_device();
  run_backward(dy, dx, false);
}

void CudaSequenceExecutor::backward_impl(std::span<const float> dy, std::span<float> dx,
                                         std::span<float> d_initial_state) {
  RECUR_CHECK_ARG(have_forward_, "backward: the last forward did not complete (it threw)");
  use_device();
  cudaStream_t st = stream();
  const CoreSpec& s = spec();
  const bool lstm = has_cell_state(s.cell);
  const int T = t_, B = b_, H = s.hidden, L = s.layers;
  const size_t tb = static_cast<size_t>(T) * B, bh = static_cast<size_t>(B) * H;
  const auto S = static_cast<size_t>(s.state_size());
  const bool want_initial = !d_initial_state.empty();
  pin_io_.reserve(std::max(tb * H, tb * s.input + 2 * L * bh));
  std::copy(dy.begin(), dy.end(), pin_io_.data());
  dy_.reserve(tb * H);
  dy_.upload({pin_io_.data(), tb * H}, st);
  if (!device_resident_) dw_.upload(host_dw_.span(), st);  // cuDNN's rule: gradients ADD
  sync();  // pin_io_ is reused for the results below
  if (!dx.empty()) dx_.reserve(tb * s.input);
  run_backward(dy_.data(), dx.empty() ? nullptr : dx_.data(), want_initial);
  float* host_dx = pin_io_.data();
  float* host_dh = host_dx + tb * s.input;
  float* host_dc = host_dh + L * bh;
  if (!dx.empty()) dx_.download({host_dx, tb * s.input}, st);
  if (want_initial) {
    dh0_.download({host_dh, L * bh}, st);
    if (lstm) dc0_.download({host_dc, L * bh}, st);
  }
  if (!device_resident_) dw_.download(host_dw_.span(), st);
  sync();
  if (!dx.empty()) std::copy_n(host_dx, tb * s.input, dx.begin());
  if (want_initial)
    for (int b = 0; b < B; ++b)
      for (int k = 0; k < L; ++k) {
        float* dst = d_initial_state.data() + static_cast<size_t>(b) * S;
        std::copy_n(host_dh + k * bh + static_cast<size_t>(b) * H, H, dst + k * H);
        if (lstm) std::copy_n(host_dc + k * bh + static_cast<size_t>(b) * H, H, dst + (L + k) * H);
      }
}

}  // namespace recur::policy
