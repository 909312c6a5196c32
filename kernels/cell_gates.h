// The elementwise half of one recurrent-core step on the GPU (the GEMM half is cuBLAS): the fused
// gate kernel of policy/core_spec.h for all four cell types, and the step's prepare kernel (x into
// the stack, episode-start reset). The CUDA step executor (policy/cuda/cuda_step_executor.h)
// launches one prepare per step, then per layer one GEMM and one gate kernel. kernels/ knows
// nothing of policy/, so the cell type is its own enum.
//
// The "xh stack": the GEMM's left operand of every layer, one buffer, layer after layer:
//
//   layer 0     (B, K_0 = in + H)  row-major: columns 0..in-1 = x, columns in..K_0-1 = h_0
//   layer k>0   (B, K_k = 2H)      row-major: columns 0..H-1 = h_{k-1} (new), columns H.. = h_k
//
// so layer k starts at float k == 0 ? 0 : B * (in + H) + (k - 1) * B * 2H. The h columns of each
// layer ARE the resident recurrent state; the gate kernel of layer k updates them in place (after
// the GEMM of layer k has read them) and writes the same new h into layer k+1's input columns.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace recur::kernels {

#ifdef __CUDACC__
#define RECUR_HOST_DEVICE __host__ __device__
#else
#define RECUR_HOST_DEVICE
#endif

enum class Cell : int { kLstm, kGru, kRnnTanh, kRnnRelu, kLstmLn, kMinGru, kMinGruHighway };

// Float offset of layer k in the xh stack described above.
RECUR_HOST_DEVICE inline size_t xh_stack_offset(int layer, int batch, int input, int hidden) {
  if (layer == 0) return 0;
  return static_cast<size_t>(batch) * (input + hidden) +
         static_cast<size_t>(layer - 1) * batch * 2 * hidden;
}
// Floats of the whole xh stack of `layers` layers.
RECUR_HOST_DEVICE inline size_t xh_stack_size(int layers, int batch, int input, int hidden) {
  return xh_stack_offset(layers, batch, input, hidden);
}

struct CellGatesArgs {
  Cell cell = Cell::kLstm;
  int batch = 0;        // B
  int hidden = 0;       // H
  float cell_clip = 0;  // LSTM, when > 0: c is stored raw and clamped to [-clip, clip] when read
  // (B, C) = [x, h] * w, no bias. C = 4H: LSTM and LSTM_LN i|f|g|o, GRU r|z|n_x|n_h; C = 3H:
  // MINGRU_HIGHWAY z|h~|p; C = 2H: MINGRU z|h~; C = H for RNN.
  const float* gates = nullptr;
  const float* bias_ih = nullptr;  // (G*H) canonical b_W, gate blocks in canonical order
  const float* bias_hh = nullptr;  // (G*H) canonical b_R
  float* h = nullptr;              // (B, h_stride), columns 0..H-1: this layer's h, old in, new out
  int h_stride = 0;
  float* c = nullptr;       // (B, H) LSTM cell state, old in, new out; null for other cells
  float* h_next = nullptr;  // (B, next_stride), columns 0..H-1: next layer's input; null at the top
  int next_stride = 0;
  float* out = nullptr;  // (B, H) contiguous copy of the new h; null below the top layer
  // LSTM_LN only (no biases): LayerNorm gains and shifts (5H), rows i, f, g, o, c; and its eps.
  const float* norm_weight = nullptr;
  const float* norm_bias = nullptr;
  float norm_epsilon = 0;
  // MINGRU layers k >= 1 of a residual stack (policy/core_spec.h): this layer's input (B,
  // residual_stride), added to the new h for h_next and out (the state keeps h alone); else null.
  // MINGRU_HIGHWAY layers k >= 1: the same input, out_{k-1} of the highway s h + (1 - s) out_{k-1}
  // (null at layer 0, where out_{-1} = 0).
  const float* residual = nullptr;
  int residual_stride = 0;
};

// One thread per (slot, unit): bias, activations (expf/tanhf, no fast math), cell update, clip.
// LSTM_LN: one thread block per slot instead, since its layer norms reduce over the H units of a
// row (block sums in a fixed tree), then the same per-unit pass.
void launch_cell_gates(const CellGatesArgs& args, cudaStream_t stream);

// A step's first kernel: x (B, input), device memory, into layer 0's x columns of the xh stack;
// and for every slot b with episode_start[b] != 0, zero its h in every layer of the xh stack and,
// when c is not null, its c of every layer. One launch where a 2D memcpy and a reset kernel were
// two graph nodes (the two parts touch disjoint columns).
//   x (B, input), episode_start (B), xh (the stack above), c (L, B, H) or null
void launch_prepare_step(const float* x, const uint8_t* episode_start, float* xh, float* c,
                         int layers, int batch, int input, int hidden, cudaStream_t stream);

}  // namespace recur::kernels
