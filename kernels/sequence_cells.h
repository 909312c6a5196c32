// The elementwise halves of the fused CUDA sequence executor (policy/cuda/cuda_sequence_executor.h)
// for the two cores cuDNN's RNN lacks, the layer-norm LSTM and minGRU (equations in
// policy/core_spec.h); the GEMM halves are cuBLAS. Resets are applied inside the time loop (the
// effective previous state of a slot that starts an episode is zero), so a (T, B) batch runs
// whole, without cutting it into sub-sequences as cuDNN needs.
//
// Layouts are the CPU sequence engine's (policy/cpu/sequence_engine.h): rows are time-major
// (row = t * B + b), gate blocks are column ranges of H. kernels/ knows nothing of policy/.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace recur::kernels {

// dst[b] = start[b] ? 0 : src[b] for B rows of H, for h and (when c_src is not null) c. start:
// device (B). Forward: the effective previous state of a step (zeros at an episode start).
// Backward: the carry to the step before (nothing flows across a reset).
void launch_masked_copy(const float* h_src, const float* c_src, const uint8_t* start, int B, int H,
                        float* h_dst, float* c_dst, cudaStream_t stream);

// One step of the layer-norm LSTM for B rows (one thread block per row: its five layer norms
// reduce over the row's H units, in fixed trees).
struct LnLstmStep {
  int batch = 0, hidden = 0;
  float eps = 0;
  float* gates = nullptr;         // (B, 4H) [i f g o] pre-activations in, activations out
  const float* c_prev = nullptr;  // (B, H) effective previous (normalized) cell state
  float* c = nullptr;             // (B, H) new normalized cell state
  float* h = nullptr;             // (B, H) new h
  float* xhat = nullptr;          // (B, 5H) normalized values before gain and shift (i f g o c)
  float* rstd = nullptr;          // (B, 5) 1 / sqrt(var + eps) per group
  float* tanh_c = nullptr;        // (B, H) tanh(c)
  const float* gain = nullptr;    // (5H) LayerNorm gains, rows i f g o c
  const float* shift = nullptr;   // (5H) LayerNorm shifts
};
void launch_ln_lstm_step(const LnLstmStep& a, cudaStream_t stream);

// Its backward for B rows: dh = dh_out + dh_next and dc_next in; out dnorm (the gradients of the
// five LayerNorm outputs, for the gain and shift gradients), dgates (the pre-activation gradients
// of the four gate blocks, for the GEMMs) and dc_prev (the raw gradient of the previous cell
// state, before the reset mask).
struct LnLstmStepGrad {
  int batch = 0, hidden = 0;
  const float* act = nullptr;  // (B, 4H) activations of the forward
  const float* xhat = nullptr;
  const float* rstd = nullptr;
  const float* tanh_c = nullptr;
  const float* c_prev = nullptr;
  const float* gain = nullptr;
  const float* dh_out = nullptr;   // (B, H) gradient at this step's output
  const float* dh_next = nullptr;  // (B, H) carried from step t + 1
  const float* dc_next = nullptr;  // (B, H)
  float* dnorm = nullptr;          // (B, 5H)
  float* dgates = nullptr;         // (B, 4H)
  float* dc_prev = nullptr;        // (B, H)
};
void launch_ln_lstm_step_grad(const LnLstmStepGrad& a, cudaStream_t stream);

// The minGRU layer over all T steps at once: a two-level parallel scan of h_t = a_t h_{t-1} + b_t
// (a_t = 0 at an episode start, else 1 - z_t; b_t = z_t h~_t) over T, one column per (b, j). A
// block holds 32 columns x kScanChunks time chunks: each thread folds its chunk's affine maps,
// one thread per column composes the chunks' carries in order, and each thread re-runs its chunk
// from its carry with the CPU engine's update h += z (h~ - h), writing every step.
struct MinGruScan {
  int T = 0, B = 0, H = 0;
  int G = 2;                        // gate blocks per row: 2, or 3 with mingru_highway's p
  float* zh = nullptr;              // (T*B, G*H) [z | h~ (| p)] input projection in (no bias);
                                    // out: sigmoid(z + b_z) and h~ + b_h (p untouched)
  const float* bias = nullptr;      // (2H) bias_ih
  const uint8_t* starts = nullptr;  // (T*B) episode starts
  const float* h0 = nullptr;        // (B, H) initial state
  float* h_prev = nullptr;          // (T*B, H) effective previous h (out)
  float* h = nullptr;               // (T*B, H) out
};
void launch_mingru_scan(const MinGruScan& a, cudaStream_t stream);

// Its backward, the same scan run from t = T - 1 down: g_t = dh_out_t + n_t with the carry
// n_{t-1} = a_t g_t; out the pre-activation gradients dzh = [g (h~ - h_prev) z (1 - z) | g z] and
// dh0 = a_0 g_0 (the initial state's gradient; null: not wanted).
struct MinGruScanGrad {
  int T = 0, B = 0, H = 0;
  int G = 2;                  // as MinGruScan's
  const float* zh = nullptr;  // activations of the forward [z | h~ (| s)]
  const uint8_t* starts = nullptr;
  const float* h_prev = nullptr;
  const float* dh_out = nullptr;  // (T*B, H)
  float* dzh = nullptr;           // (T*B, G*H): blocks z and h~ written
  float* dh0 = nullptr;           // (B, H) or null
};
void launch_mingru_scan_grad(const MinGruScanGrad& a, cudaStream_t stream);

// mingru_highway's gated highway over all T*B rows of a layer after its scan, one thread per
// element (kernels/mingru_scan_math.h's highway_forward_at): out = s h + (1 - s) below with
// s = sigmoid(p + b_p); p, the third gate block, becomes s.
struct HighwayForward {
  long long rows = 0;  // T*B
  int H = 0;
  float* gates = nullptr;         // (rows, 3H): block 2 p in, s out
  const float* bias_p = nullptr;  // (H): bias_ih's third block
  const float* h = nullptr;       // (rows, H) the scan's output
  const float* below = nullptr;   // (rows, H) out_{k-1}, or null at layer 0
  float* out = nullptr;           // (rows, H)
};
void launch_highway_forward(const HighwayForward& a, cudaStream_t stream);

// Its transpose (highway_backward_at), before the scan's backward: dout becomes dh in place.
struct HighwayBackward {
  long long rows = 0;
  int H = 0;
  const float* gates = nullptr;  // (rows, 3H): block 2 holds s
  const float* h = nullptr;      // (rows, H)
  const float* below = nullptr;  // (rows, H) or null at layer 0
  float* dout = nullptr;         // (rows, H): d out in, d h out
  float* dgates = nullptr;       // (rows, 3H): block 2 gets d p
  float* dskip = nullptr;        // (rows, H) d below, or null at layer 0
};
void launch_highway_backward(const HighwayBackward& a, cudaStream_t stream);

// The row ranges launch_column_sums splits `rows` into at (rows, cols): enough blocks of 32
// columns x 32 row lanes to fill a large GPU (~264) where the columns alone give few, each range
// at least 1024 rows. A function of the shape alone, never of the device, so that the summation
// order (and so the result, bit for bit) is the same on every GPU.
inline constexpr int kColumnSumColumns = 32;  // columns per block of launch_column_sums
inline int column_sum_splits(int rows, int cols) {
  constexpr int kTargetBlocks = 264, kMinRows = 1024;
  if (rows <= 0 || cols <= 0) return 1;
  const int col_blocks = (cols + kColumnSumColumns - 1) / kColumnSumColumns;
  const int by_blocks = (kTargetBlocks + col_blocks - 1) / col_blocks;
  const int by_rows = (rows + kMinRows - 1) / kMinRows;
  const int splits = by_blocks < by_rows ? by_blocks : by_rows;
  return splits < 1 ? 1 : splits;
}

// Device doubles launch_column_sums needs as scratch at (rows, cols): the partial sums of each
// row range for both outputs; 0 when the rows are not split.
inline size_t column_sums_scratch(int rows, int cols) {
  const int splits = column_sum_splits(rows, cols);
  return splits > 1 ? 2 * static_cast<size_t>(splits) * static_cast<size_t>(cols) : 0;
}

// out[j] += sum over rows r of a[r, j] * (w ? w[r, j] : 1), and when out_plain is given (w must
// be too) out_plain[j] += sum over rows r of a[r, j], from the same read of a; a and w (rows,
// cols) row-major. Summed in double: each of column_sum_splits(rows, cols) row ranges by 32 row
// lanes per column folded in a fixed tree, then the ranges' partials added in order:
// deterministic (two runs agree bitwise). scratch: column_sums_scratch(rows, cols) doubles of
// device memory (may be null when that is 0). The bias gradient, and the LayerNorm gain and
// shift gradients in one pass.
void launch_column_sums(const float* a, const float* w, int rows, int cols, float* out,
                        float* out_plain, double* scratch, cudaStream_t stream);

// out = a + b, n floats (a residual stack's output).
void launch_add(const float* a, const float* b, long long n, float* out, cudaStream_t stream);

}  // namespace recur::kernels
