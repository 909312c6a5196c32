// The fused gate kernel and the prepare kernel (x in, episode-start reset) of the CUDA step
// executor (see cell_gates.h).
// The math follows policy/cpu/gate_math.h term by term (biases summed before they are added to
// the GEMM result, as the CPU step executor pre-sums them) so that the two agree to ~1e-6
// relative; expf/tanhf are the accurate library functions, never the __expf intrinsics.
#include "core/error.h"
#include "kernels/cell_gates.h"

namespace recur::kernels {
namespace {

constexpr int kBlock = 256;

int grid_for(size_t n) {
  const size_t blocks = (n + kBlock - 1) / kBlock;
  return static_cast<int>(blocks < 65535 ? blocks : 65535);  // grid-stride loops cover the rest
}

__device__ float sigmoid(float x) {
  return 1.0f / (1.0f + expf(-x));
}

// One thread per (slot b, unit j) of a (B, H) grid.
__global__ void cell_gates_kernel(CellGatesArgs a) {
  const int H = a.hidden;
  const int C = a.cell == Cell::kLstm || a.cell == Cell::kGru ? 4 * H
                : a.cell == Cell::kMinGruHighway              ? 3 * H
                : a.cell == Cell::kMinGru                     ? 2 * H
                                                              : H;
  const size_t n = static_cast<size_t>(a.batch) * H;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const size_t b = i / H;
    const int j = static_cast<int>(i % H);
    const float* g = a.gates + b * C;  // this slot's row of pre-activations
    float* h = a.h + b * a.h_stride + j;
    // Pre-activation of canonical gate block q (both biases) at unit j.
    auto pre = [&](int q) { return g[q * H + j] + (a.bias_ih[q * H + j] + a.bias_hh[q * H + j]); };
    float h_new = 0.0f;
    switch (a.cell) {
      case Cell::kLstm: {
        const float i_gate = sigmoid(pre(0)), f_gate = sigmoid(pre(1));
        const float g_gate = tanhf(pre(2)), o_gate = sigmoid(pre(3));
        float* c = a.c + b * H + j;
        // cuDNN's MINMAX clip (core_spec.h): the state stays raw and is clipped where it is read.
        const float clip = a.cell_clip;
        const float c_old = clip > 0.0f ? fminf(fmaxf(*c, -clip), clip) : *c;
        const float c_new = f_gate * c_old + i_gate * g_gate;
        *c = c_new;
        h_new = o_gate * tanhf(clip > 0.0f ? fminf(fmaxf(c_new, -clip), clip) : c_new);
        break;
      }
      case Cell::kGru: {
        // Columns r | z | n_x | n_h; canonical biases r | z | n.
        const float r = sigmoid(pre(0)), z = sigmoid(pre(1));
        const float n_x = g[2 * H + j] + a.bias_ih[2 * H + j];
        const float n_h = g[3 * H + j] + a.bias_hh[2 * H + j];
        const float n_gate = tanhf(n_x + r * n_h);
        h_new = (1.0f - z) * n_gate + z * *h;
        break;
      }
      case Cell::kRnnTanh:
        h_new = tanhf(pre(0));
        break;
      case Cell::kRnnRelu:
        h_new = fmaxf(pre(0), 0.0f);
        break;
      case Cell::kMinGru:
      case Cell::kMinGruHighway: {
        // h' = h + z (h~ - h), as gate_math::mingru_forward (the h rows of w are zero).
        const float z = sigmoid(pre(0)), h_tilde = pre(1);
        h_new = *h + z * (h_tilde - *h);
        break;
      }
      case Cell::kLstmLn:
        break;  // layer_norm_lstm_kernel's (launch_cell_gates never sends it here)
    }
    *h = h_new;
    // A residual minGRU layer outputs h_k + its input; a highway layer s h_k + (1 - s) its input
    // (0 at layer 0), as gate_math::highway_forward; the state stays h_k.
    float out = h_new;
    if (a.cell == Cell::kMinGruHighway) {
      const float s = sigmoid(pre(2));
      if (a.residual) {
        const float below = a.residual[b * a.residual_stride + j];
        out = below + s * (h_new - below);
      } else {
        out = s * h_new;
      }
    } else if (a.residual) {
      out = h_new + a.residual[b * a.residual_stride + j];
    }
    if (a.h_next) a.h_next[b * a.next_stride + j] = out;
    if (a.out) a.out[i] = out;
  }
}

// LSTM_LN (policy/core_spec.h): one block of kNormBlock threads per slot row (grid-stride over
// rows), each thread a strided set of units. The gate blocks' means and variances are block sums
// of the four blocks at once; then the cell update writes the raw c, whose mean and variance are
// two more block sums, and the last pass normalizes c and forms h. Two-pass moments (mean, then
// the mean of squared centred values) and the op order of gate_math::layer_norm_row, so the CPU
// step executor and this kernel agree to float rounding.
constexpr int kNormBlock = 128;

// Sums of Q values over the block in a fixed tree; every thread gets the totals. sh: Q x
// kNormBlock floats. Ends with a barrier, so sh may be reused at once.
template <int Q>
__device__ void block_sums(float (&v)[Q], float (*sh)[kNormBlock]) {
  for (int q = 0; q < Q; ++q) sh[q][threadIdx.x] = v[q];
  __syncthreads();
  for (unsigned s = kNormBlock / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s)
      for (int q = 0; q < Q; ++q) sh[q][threadIdx.x] += sh[q][threadIdx.x + s];
    __syncthreads();
  }
  for (int q = 0; q < Q; ++q) v[q] = sh[q][0];
  __syncthreads();
}

__global__ void __launch_bounds__(kNormBlock) layer_norm_lstm_kernel(CellGatesArgs a) {
  __shared__ float sh[4][kNormBlock];
  const int H = a.hidden;
  const float inv_h = 1.0f / static_cast<float>(H);
  const float* nw = a.norm_weight;
  const float* nb = a.norm_bias;
  for (int b = blockIdx.x; b < a.batch; b += gridDim.x) {  // uniform over the block
    const float* g = a.gates + static_cast<size_t>(b) * 4 * H;
    float* c = a.c + static_cast<size_t>(b) * H;
    float mean[4] = {0.0f, 0.0f, 0.0f, 0.0f}, rstd[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int j = threadIdx.x; j < H; j += kNormBlock)
      for (int q = 0; q < 4; ++q) mean[q] += g[q * H + j];
    block_sums<4>(mean, sh);
    for (int q = 0; q < 4; ++q) mean[q] *= inv_h;
    for (int j = threadIdx.x; j < H; j += kNormBlock)
      for (int q = 0; q < 4; ++q) {
        const float d = g[q * H + j] - mean[q];
        rstd[q] += d * d;
      }
    block_sums<4>(rstd, sh);
    for (int q = 0; q < 4; ++q) rstd[q] = 1.0f / sqrtf(rstd[q] * inv_h + a.norm_epsilon);
    // LN of gate block q at unit j: the normalized value times its gain plus its shift.
    auto ln = [&](int q, int j) {
      return (g[q * H + j] - mean[q]) * rstd[q] * nw[q * H + j] + nb[q * H + j];
    };
    float c_sum[1] = {0.0f};
    for (int j = threadIdx.x; j < H; j += kNormBlock) {
      const float i_gate = sigmoid(ln(0, j)), f_gate = sigmoid(ln(1, j));
      const float g_gate = tanhf(ln(2, j));
      const float c_raw = f_gate * c[j] + i_gate * g_gate;  // this thread's units only
      c[j] = c_raw;
      c_sum[0] += c_raw;
    }
    block_sums<1>(c_sum, sh);
    const float c_mean = c_sum[0] * inv_h;
    float c_var[1] = {0.0f};
    for (int j = threadIdx.x; j < H; j += kNormBlock) {
      const float d = c[j] - c_mean;
      c_var[0] += d * d;
    }
    block_sums<1>(c_var, sh);
    const float c_rstd = 1.0f / sqrtf(c_var[0] * inv_h + a.norm_epsilon);
    for (int j = threadIdx.x; j < H; j += kNormBlock) {
      const float c_new = (c[j] - c_mean) * c_rstd * nw[4 * H + j] + nb[4 * H + j];
      c[j] = c_new;
      const float h_new = sigmoid(ln(3, j)) * tanhf(c_new);
      a.h[static_cast<size_t>(b) * a.h_stride + j] = h_new;
      if (a.h_next) a.h_next[static_cast<size_t>(b) * a.next_stride + j] = h_new;
      if (a.out) a.out[static_cast<size_t>(b) * H + j] = h_new;
    }
  }
}

// Indices [0, B*input) copy x into layer 0's x columns (row pitch K_0 = input + H); the next
// L*B*H indices are one per (layer k, slot b, unit j) of the reset.
__global__ void prepare_step_kernel(const float* __restrict__ x,
                                    const uint8_t* __restrict__ episode_start, float* xh, float* c,
                                    int layers, int batch, int input, int hidden) {
  const size_t copy = static_cast<size_t>(batch) * input;
  const size_t n = copy + static_cast<size_t>(layers) * batch * hidden;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    if (i < copy) {
      const size_t b = i / input;
      const size_t col = i % input;
      xh[b * static_cast<size_t>(input + hidden) + col] = x[i];
      continue;
    }
    const size_t r = i - copy;
    const int j = static_cast<int>(r % hidden);
    const int b = static_cast<int>((r / hidden) % batch);
    const int k = static_cast<int>(r / (static_cast<size_t>(hidden) * batch));
    if (!episode_start[b]) continue;
    const int h_column = k == 0 ? input : hidden;  // = K_k - H
    const int row = h_column + hidden;             // K_k
    xh[xh_stack_offset(k, batch, input, hidden) + static_cast<size_t>(b) * row + h_column + j] =
        0.0f;
    if (c) c[r] = 0.0f;
  }
}

}  // namespace

void launch_cell_gates(const CellGatesArgs& args, cudaStream_t stream) {
  const size_t n = static_cast<size_t>(args.batch) * args.hidden;
  if (n == 0) return;
  if (args.cell == Cell::kLstmLn) {
    const int rows = args.batch < 65535 ? args.batch : 65535;  // grid-stride over the rest
    layer_norm_lstm_kernel<<<rows, kNormBlock, 0, stream>>>(args);
  } else {
    cell_gates_kernel<<<grid_for(n), kBlock, 0, stream>>>(args);
  }
  CUDA_CHECK(cudaGetLastError());
}

void launch_prepare_step(const float* x, const uint8_t* episode_start, float* xh, float* c,
                         int layers, int batch, int input, int hidden, cudaStream_t stream) {
  const size_t n =
      static_cast<size_t>(batch) * input + static_cast<size_t>(layers) * batch * hidden;
  if (n == 0) return;
  prepare_step_kernel<<<grid_for(n), kBlock, 0, stream>>>(x, episode_start, xh, c, layers, batch,
                                                          input, hidden);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace recur::kernels
