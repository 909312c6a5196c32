// The fused sequence executor's elementwise kernels for the layer-norm LSTM and minGRU (see
// sequence_cells.h). The math follows the CPU sequence engine (policy/cpu/sequence_engine.h,
// gate_math.h) operation for operation where the order is free (two-pass moments, h += z (h~ - h),
// LayerNorm's transpose as rstd (g - mean g - xhat mean(g xhat))), so that the executors differ
// by the summation order of reductions and GEMMs alone; expf/tanhf are the accurate library
// functions.
#include "core/error.h"
#include "kernels/block_reduce.cuh"
#include "kernels/mingru_scan_math.h"
#include "kernels/sequence_cells.h"

namespace recur::kernels {
namespace {

constexpr int kBlock = 256;
constexpr int kRowBlock = 128;    // threads per row of the layer-norm kernels (a power of two)
constexpr int kScanColumns = 32;  // columns per block; kScanChunks (mingru_scan_math.h) rows
// column_sums_kernel's block: columns (sequence_cells.h, which splits the rows by it) x row lanes
constexpr int kSumColumns = kColumnSumColumns, kSumLanes = 32;

int grid_for(size_t n) {
  const size_t blocks = (n + kBlock - 1) / kBlock;
  return static_cast<int>(blocks < 65535 ? blocks : 65535);  // grid-stride loops cover the rest
}

int row_grid(int rows) {
  return rows < 65535 ? rows : 65535;
}

__device__ float sigmoid(float x) {
  return 1.0f / (1.0f + expf(-x));
}

// Sums of Q values over the block in a fixed tree; every thread gets the totals. Ends with a
// barrier, so sh may be reused at once.
template <int Q>
__device__ void row_sums(float (&v)[Q], float (*sh)[kRowBlock]) {
  for (int q = 0; q < Q; ++q) sh[q][threadIdx.x] = v[q];
  __syncthreads();
  for (unsigned s = kRowBlock / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s)
      for (int q = 0; q < Q; ++q) sh[q][threadIdx.x] += sh[q][threadIdx.x + s];
    __syncthreads();
  }
  for (int q = 0; q < Q; ++q) v[q] = sh[q][0];
  __syncthreads();
}

__global__ void masked_copy_kernel(const float* __restrict__ h_src, const float* __restrict__ c_src,
                                   const uint8_t* __restrict__ start, int B, int H,
                                   float* __restrict__ h_dst, float* __restrict__ c_dst) {
  const size_t n = static_cast<size_t>(B) * H;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const bool reset = start[i / H] != 0;
    h_dst[i] = reset ? 0.0f : h_src[i];
    if (c_src) c_dst[i] = reset ? 0.0f : c_src[i];
  }
}

// One block per row b (grid-stride over rows), each thread a strided set of units, as the step
// executor's layer_norm_lstm_kernel (kernels/cell_gates.cu), keeping what backward reads.
__global__ void __launch_bounds__(kRowBlock) ln_lstm_step_kernel(LnLstmStep a) {
  __shared__ float sh[4][kRowBlock];
  const int H = a.hidden;
  const float inv_h = 1.0f / static_cast<float>(H);
  for (int b = blockIdx.x; b < a.batch; b += gridDim.x) {  // uniform over the block
    float* g = a.gates + static_cast<size_t>(b) * 4 * H;
    const float* cp = a.c_prev + static_cast<size_t>(b) * H;
    float* c = a.c + static_cast<size_t>(b) * H;
    float* xh = a.xhat + static_cast<size_t>(b) * 5 * H;
    float* rs = a.rstd + static_cast<size_t>(b) * 5;
    float mean[4] = {0.0f, 0.0f, 0.0f, 0.0f}, var[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int j = threadIdx.x; j < H; j += kRowBlock)
      for (int q = 0; q < 4; ++q) mean[q] += g[q * H + j];
    row_sums<4>(mean, sh);
    for (int q = 0; q < 4; ++q) mean[q] *= inv_h;
    for (int j = threadIdx.x; j < H; j += kRowBlock)
      for (int q = 0; q < 4; ++q) {
        const float d = g[q * H + j] - mean[q];
        var[q] += d * d;
      }
    row_sums<4>(var, sh);
    float r[4];
    for (int q = 0; q < 4; ++q) r[q] = 1.0f / sqrtf(var[q] * inv_h + a.eps);
    if (threadIdx.x < 4) rs[threadIdx.x] = r[threadIdx.x];
    float c_sum[1] = {0.0f};
    for (int j = threadIdx.x; j < H; j += kRowBlock) {
      float act[4];
      for (int q = 0; q < 4; ++q) {
        const float x = (g[q * H + j] - mean[q]) * r[q];
        xh[q * H + j] = x;
        act[q] = x * a.gain[q * H + j] + a.shift[q * H + j];
      }
      const float i = sigmoid(act[0]), f = sigmoid(act[1]), gg = tanhf(act[2]);
      g[j] = i;
      g[H + j] = f;
      g[2 * H + j] = gg;
      g[3 * H + j] = sigmoid(act[3]);
      const float c_raw = f * cp[j] + i * gg;  // this thread's units only
      c[j] = c_raw;
      c_sum[0] += c_raw;
    }
    row_sums<1>(c_sum, sh);
    const float c_mean = c_sum[0] * inv_h;
    float c_var[1] = {0.0f};
    for (int j = threadIdx.x; j < H; j += kRowBlock) {
      const float d = c[j] - c_mean;
      c_var[0] += d * d;
    }
    row_sums<1>(c_var, sh);
    const float c_r = 1.0f / sqrtf(c_var[0] * inv_h + a.eps);
    if (threadIdx.x == 0) rs[4] = c_r;
    for (int j = threadIdx.x; j < H; j += kRowBlock) {
      const float x = (c[j] - c_mean) * c_r;
      xh[4 * H + j] = x;
      const float c_new = x * a.gain[4 * H + j] + a.shift[4 * H + j];
      c[j] = c_new;
      const float t = tanhf(c_new);
      a.tanh_c[static_cast<size_t>(b) * H + j] = t;
      a.h[static_cast<size_t>(b) * H + j] = g[3 * H + j] * t;
    }
  }
}

__global__ void __launch_bounds__(kRowBlock) ln_lstm_step_grad_kernel(LnLstmStepGrad a) {
  __shared__ float sh[8][kRowBlock];
  const int H = a.hidden;
  const float inv_h = 1.0f / static_cast<float>(H);
  for (int b = blockIdx.x; b < a.batch; b += gridDim.x) {
    const size_t o = static_cast<size_t>(b) * H;
    const float* act = a.act + o * 4;
    const float* xh = a.xhat + o * 5;
    const float* rs = a.rstd + static_cast<size_t>(b) * 5;
    float* dn = a.dnorm + o * 5;
    float* dg = a.dgates + o * 4;
    float* dcp = a.dc_prev + o;
    // The output gate and the normalized cell state; LN_c's transpose needs two row sums.
    float s[2] = {0.0f, 0.0f};
    for (int j = threadIdx.x; j < H; j += kRowBlock) {
      const float og = act[3 * H + j], tc = a.tanh_c[o + j];
      const float dh = a.dh_out[o + j] + a.dh_next[o + j];
      dn[3 * H + j] = dh * tc * og * (1.0f - og);
      const float dcn = a.dc_next[o + j] + dh * og * (1.0f - tc * tc);
      dn[4 * H + j] = dcn;
      const float gc = dcn * a.gain[4 * H + j];
      s[0] += gc;
      s[1] += gc * xh[4 * H + j];
    }
    row_sums<2>(s, sh);
    const float mean_g = s[0] * inv_h, mean_gx = s[1] * inv_h;
    float t[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    for (int j = threadIdx.x; j < H; j += kRowBlock) {
      const float dc =
          rs[4] * (dn[4 * H + j] * a.gain[4 * H + j] - mean_g - xh[4 * H + j] * mean_gx);
      const float i = act[j], f = act[H + j], g = act[2 * H + j];
      dn[j] = dc * g * i * (1.0f - i);
      dn[H + j] = dc * a.c_prev[o + j] * f * (1.0f - f);
      dn[2 * H + j] = dc * i * (1.0f - g * g);
      dcp[j] = dc * f;
      for (int q = 0; q < 4; ++q) {
        const float gq = dn[q * H + j] * a.gain[q * H + j];
        t[2 * q] += gq;
        t[2 * q + 1] += gq * xh[q * H + j];
      }
    }
    row_sums<8>(t, sh);
    for (int j = threadIdx.x; j < H; j += kRowBlock)
      for (int q = 0; q < 4; ++q)
        dg[q * H + j] = rs[q] * (dn[q * H + j] * a.gain[q * H + j] - t[2 * q] * inv_h -
                                 xh[q * H + j] * (t[2 * q + 1] * inv_h));
  }
}

// blockDim (kScanColumns, kScanChunks): thread (x, y) is chunk y of column blockIdx.x * 32 + x,
// column = b * H + j; the passes are kernels/mingru_scan_math.h's.
__global__ void __launch_bounds__(kScanColumns* kScanChunks) mingru_scan_kernel(MinGruScan a) {
  __shared__ float sa[kScanChunks][kScanColumns], sb[kScanChunks][kScanColumns];
  const size_t cols = static_cast<size_t>(a.B) * a.H;
  const size_t col = blockIdx.x * static_cast<size_t>(kScanColumns) + threadIdx.x;
  const bool live = col < cols;  // every thread reaches the barriers
  const ScanColumn c{
      a.T, a.B, a.H, live ? static_cast<int>(col / a.H) : 0, live ? static_cast<int>(col % a.H) : 0,
      a.G};
  int t0 = 0, t1 = 0;
  mingru_chunk_range(a.T, static_cast<int>(threadIdx.y), t0, t1);
  float A = 1.0f, Bc = 0.0f;
  if (live) mingru_fold_forward(c, t0, t1, a.zh, a.bias, a.starts, A, Bc);
  sa[threadIdx.y][threadIdx.x] = A;
  sb[threadIdx.y][threadIdx.x] = Bc;
  __syncthreads();
  if (threadIdx.y == 0)
    mingru_compose_forward(&sa[0][threadIdx.x], &sb[0][threadIdx.x], kScanColumns,
                           live ? a.h0[col] : 0.0f);
  __syncthreads();
  if (live)
    mingru_chunk_forward(c, t0, t1, a.zh, a.starts, sa[threadIdx.y][threadIdx.x], a.h_prev, a.h);
}

__global__ void __launch_bounds__(kScanColumns* kScanChunks)
    mingru_scan_grad_kernel(MinGruScanGrad a) {
  __shared__ float sa[kScanChunks][kScanColumns], sb[kScanChunks][kScanColumns];
  const size_t cols = static_cast<size_t>(a.B) * a.H;
  const size_t col = blockIdx.x * static_cast<size_t>(kScanColumns) + threadIdx.x;
  const bool live = col < cols;
  const ScanColumn c{
      a.T, a.B, a.H, live ? static_cast<int>(col / a.H) : 0, live ? static_cast<int>(col % a.H) : 0,
      a.G};
  int t0 = 0, t1 = 0;
  mingru_chunk_range(a.T, static_cast<int>(threadIdx.y), t0, t1);
  float A = 1.0f, Bc = 0.0f;
  if (live) mingru_fold_backward(c, t0, t1, a.zh, a.starts, a.dh_out, A, Bc);
  sa[threadIdx.y][threadIdx.x] = A;
  sb[threadIdx.y][threadIdx.x] = Bc;
  __syncthreads();
  if (threadIdx.y == 0) {
    const float dh0 =
        mingru_compose_backward(&sa[0][threadIdx.x], &sb[0][threadIdx.x], kScanColumns);
    if (live && a.dh0) a.dh0[col] = dh0;
  }
  __syncthreads();
  if (live)
    mingru_chunk_backward(c, t0, t1, a.zh, a.starts, a.h_prev, a.dh_out,
                          sa[threadIdx.y][threadIdx.x], a.dzh);
}

// blockDim (kSumColumns, kSumLanes), gridDim (column blocks, row ranges): thread (x, y) sums rows
// y, y + kSumLanes, ... of its block's row range, column blockIdx.x * kSumColumns + x, in double
// (with kPlain also the plain sum of a beside the weighted one), then the lanes fold in a fixed
// tree. With one range lane 0 adds the totals to out; with more it writes the range's partials to
// scratch (quantity, range, column), and column_partials_kernel adds them up in range order. The
// order depends on (rows, cols) alone, so two runs agree bitwise. A warp reads 32 neighbouring
// columns of one row (coalesced), and each block keeps 32 warps' loads in flight. The first
// version ran one thread per column over all rows: 640 columns (the layer-norm LSTM's 5H at H
// 128) filled 3 of the H200's 132 SMs and minGRU's 256 one, and at T 32 x B 1024 their backward
// took 8x and 11x their forward, which those sums account for (docs/PERFORMANCE.md, 2026-11-30;
// this version not yet run on a GPU).
template <bool kPlain>
__global__ void __launch_bounds__(kSumColumns* kSumLanes)
    column_sums_kernel(const float* __restrict__ a, const float* __restrict__ w, int rows, int cols,
                       int range_rows, float* __restrict__ out, float* __restrict__ out_plain,
                       double* __restrict__ scratch) {
  // + 1: no bank conflicts on the fold
  __shared__ double partial[kPlain ? 2 : 1][kSumLanes][kSumColumns + 1];
  const int col = blockIdx.x * kSumColumns + static_cast<int>(threadIdx.x);
  const int first = static_cast<int>(blockIdx.y) * range_rows;
  const int end = rows - first < range_rows ? rows : first + range_rows;
  double s = 0.0, plain = 0.0;
  if (col < cols)
    for (int r = first + static_cast<int>(threadIdx.y); r < end; r += kSumLanes) {
      const size_t i = static_cast<size_t>(r) * cols + col;
      const double x = a[i];
      s += w ? x * static_cast<double>(w[i]) : x;
      if constexpr (kPlain) plain += x;
    }
  partial[0][threadIdx.y][threadIdx.x] = s;
  if constexpr (kPlain) partial[1][threadIdx.y][threadIdx.x] = plain;
  detail::fold_lanes<kSumLanes>(partial[0]);
  if constexpr (kPlain) detail::fold_lanes<kSumLanes>(partial[1]);
  if (threadIdx.y != 0 || col >= cols) return;
  if (gridDim.y == 1) {
    out[col] += static_cast<float>(partial[0][0][threadIdx.x]);
    if constexpr (kPlain) out_plain[col] += static_cast<float>(partial[1][0][threadIdx.x]);
    return;
  }
  const size_t ranges = gridDim.y, range = blockIdx.y;
  scratch[range * cols + col] = partial[0][0][threadIdx.x];
  if constexpr (kPlain) scratch[(ranges + range) * cols + col] = partial[1][0][threadIdx.x];
}

// The row ranges' partials of column_sums_kernel, added in range order: one thread per (quantity,
// column); quantity 0 into out, 1 into out_plain.
__global__ void column_partials_kernel(const double* __restrict__ scratch, int ranges, int cols,
                                       int quantities, float* __restrict__ out,
                                       float* __restrict__ out_plain) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= quantities * cols) return;
  const int q = i / cols, col = i % cols;
  const double* p = scratch + static_cast<size_t>(q) * ranges * cols + col;
  double total = 0.0;
  for (int r = 0; r < ranges; ++r) total += p[static_cast<size_t>(r) * cols];
  (q == 0 ? out : out_plain)[col] += static_cast<float>(total);
}

// One thread per (row, unit) of the highway; grid-stride.
__global__ void highway_forward_kernel(HighwayForward a) {
  const long long n = a.rows * a.H;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long r = i / a.H;
    const int j = static_cast<int>(i % a.H);
    float& p = a.gates[r * 3 * a.H + 2 * a.H + j];
    a.out[i] = highway_forward_at(p, a.bias_p[j], a.h[i], a.below ? a.below + i : nullptr);
  }
}

__global__ void highway_backward_kernel(HighwayBackward a) {
  const long long n = a.rows * a.H;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long r = i / a.H;
    const long long pj = r * 3 * a.H + 2 * a.H + i % a.H;
    highway_backward_at(a.gates[pj], a.h[i], a.below ? a.below + i : nullptr, a.dout[i],
                        a.dgates[pj], a.dskip ? a.dskip + i : nullptr);
  }
}

__global__ void add_kernel(const float* __restrict__ a, const float* __restrict__ b, long long n,
                           float* __restrict__ out) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    out[i] = a[i] + b[i];
}

}  // namespace

void launch_masked_copy(const float* h_src, const float* c_src, const uint8_t* start, int B, int H,
                        float* h_dst, float* c_dst, cudaStream_t stream) {
  const size_t n = static_cast<size_t>(B) * H;
  if (n == 0) return;
  masked_copy_kernel<<<grid_for(n), kBlock, 0, stream>>>(h_src, c_src, start, B, H, h_dst, c_dst);
  CUDA_CHECK(cudaGetLastError());
}

void launch_ln_lstm_step(const LnLstmStep& a, cudaStream_t stream) {
  if (a.batch <= 0 || a.hidden <= 0) return;
  ln_lstm_step_kernel<<<row_grid(a.batch), kRowBlock, 0, stream>>>(a);
  CUDA_CHECK(cudaGetLastError());
}

void launch_ln_lstm_step_grad(const LnLstmStepGrad& a, cudaStream_t stream) {
  if (a.batch <= 0 || a.hidden <= 0) return;
  ln_lstm_step_grad_kernel<<<row_grid(a.batch), kRowBlock, 0, stream>>>(a);
  CUDA_CHECK(cudaGetLastError());
}

void launch_mingru_scan(const MinGruScan& a, cudaStream_t stream) {
  const size_t cols = static_cast<size_t>(a.B) * a.H;
  if (cols == 0 || a.T <= 0) return;
  const dim3 block(kScanColumns, kScanChunks);
  const auto grid = static_cast<unsigned>((cols + kScanColumns - 1) / kScanColumns);
  mingru_scan_kernel<<<grid, block, 0, stream>>>(a);
  CUDA_CHECK(cudaGetLastError());
}

void launch_mingru_scan_grad(const MinGruScanGrad& a, cudaStream_t stream) {
  const size_t cols = static_cast<size_t>(a.B) * a.H;
  if (cols == 0 || a.T <= 0) return;
  const dim3 block(kScanColumns, kScanChunks);
  const auto grid = static_cast<unsigned>((cols + kScanColumns - 1) / kScanColumns);
  mingru_scan_grad_kernel<<<grid, block, 0, stream>>>(a);
  CUDA_CHECK(cudaGetLastError());
}

void launch_column_sums(const float* a, const float* w, int rows, int cols, float* out,
                        float* out_plain, double* scratch, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  RECUR_CHECK_ARG(out_plain == nullptr || w != nullptr,
                  "column sums: the plain sums ride along a weighted pass only");
  const int ranges = column_sum_splits(rows, cols);
  RECUR_CHECK_ARG(ranges == 1 || scratch != nullptr,
                  "column sums: {} rows x {} columns need {} doubles of scratch", rows, cols,
                  column_sums_scratch(rows, cols));
  const int range_rows = (rows + ranges - 1) / ranges;
  const dim3 block(kSumColumns, kSumLanes);
  const dim3 grid(static_cast<unsigned>((cols + kSumColumns - 1) / kSumColumns),
                  static_cast<unsigned>(ranges));
  if (out_plain)
    column_sums_kernel<true>
        <<<grid, block, 0, stream>>>(a, w, rows, cols, range_rows, out, out_plain, scratch);
  else
    column_sums_kernel<false>
        <<<grid, block, 0, stream>>>(a, w, rows, cols, range_rows, out, nullptr, scratch);
  CUDA_CHECK(cudaGetLastError());
  if (ranges == 1) return;
  const int quantities = out_plain ? 2 : 1;
  const int n = quantities * cols;
  column_partials_kernel<<<(n + kBlock - 1) / kBlock, kBlock, 0, stream>>>(
      scratch, ranges, cols, quantities, out, out_plain);
  CUDA_CHECK(cudaGetLastError());
}

void launch_highway_forward(const HighwayForward& a, cudaStream_t stream) {
  const long long n = a.rows * a.H;
  if (n <= 0) return;
  highway_forward_kernel<<<grid_for(static_cast<size_t>(n)), kBlock, 0, stream>>>(a);
  CUDA_CHECK(cudaGetLastError());
}

void launch_highway_backward(const HighwayBackward& a, cudaStream_t stream) {
  const long long n = a.rows * a.H;
  if (n <= 0) return;
  highway_backward_kernel<<<grid_for(static_cast<size_t>(n)), kBlock, 0, stream>>>(a);
  CUDA_CHECK(cudaGetLastError());
}

void launch_add(const float* a, const float* b, long long n, float* out, cudaStream_t stream) {
  if (n <= 0) return;
  const int grid = grid_for(static_cast<size_t>(n));
  add_kernel<<<grid, kBlock, 0, stream>>>(a, b, n, out);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace recur::kernels
