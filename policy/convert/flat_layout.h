// Where each canonical weight lives in a backend's flat buffer. Every executor keeps its weights
// in one flat float buffer with its own layout; a FlatLayout maps canonical element i (in the
// canonical flat order below) to its position in that buffer, so that converting between any two
// layouts is one index gather (on the host here, on the device with kernels/gather.h) and a
// future layout change touches one function.
//
// Canonical flat order (also the CPU sequence executor's layout), per layer k:
//   weight_ih_l{k} (G*H, in_k), weight_hh_l{k} (G*H, H), bias_ih_l{k} (G*H), bias_hh_l{k} (G*H),
//   norm_weight_l{k} (5H), norm_bias_l{k} (5H)
// where an absent tensor takes no room (minGRU's weight_hh/bias_hh, lstm_ln's biases, every other
// cell's norms).
//
// The cuDNN opaque layout is never assumed: opaque_layout() builds the map from a table of what
// cudnnGetRNNWeightParams reported for every (pseudo-layer, linLayerID, matrix|bias), checking
// every shape, that every tensor is present once and that no two overlap. The table is plain
// data, so tests construct tables (contiguous, with gaps, reordered) without a GPU.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "policy/canonical_weights.h"

namespace recur::policy {

struct FlatLayout {
  std::string name;               // for messages: "canonical", "step", "cudnn"
  int64_t size = 0;               // floats in the backend buffer (gaps included)
  std::vector<int64_t> position;  // (canonical size) buffer index of each canonical element
};

// Canonical weights <-> the canonical flat order.
std::vector<float> flatten(const CanonicalWeights& weights);
CanonicalWeights unflatten(const CoreSpec& spec, std::span<const float> flat);

// Offsets of the canonical tensors of layer k in the canonical flat order.
struct CanonicalOffsets {
  int64_t weight_ih, weight_hh, bias_ih, bias_hh, norm_weight, norm_bias, end;
};
CanonicalOffsets canonical_offsets(const CoreSpec& spec, int layer);

// The identity layout (CPU sequence executor).
FlatLayout canonical_layout(const CoreSpec& spec);

// The block-cell layout of the CUDA step executor, per layer k (K = in_k + H rows, C columns):
//   w (K, C) row-major so that gates (B, C) = [x, h] (B, K) * w; rows 0..in_k-1 hold W_ih^T,
//     rows in_k..K-1 hold W_hh^T. LSTM/RNN: C = G*H, column block g = gate g of both.
//     GRU: C = 4H, blocks [r | z | n_x | n_h]: n_x has W_n^T in the x rows and zeros in the h
//     rows, n_h the reverse (the reset gate multiplies R_n h + b_Rn alone).
//   bias_ih (G*H), bias_hh (G*H) as given (the kernel adds them; the round trip stays exact).
//   lstm_ln: no biases (zero length); norm_weight (5H), norm_bias (5H) as canonical.
//   minGRU: C = 2H (z | h~), its h rows zero (its gates do not read h: the GEMM's extra rows keep
//   the xh stack every cell shares); bias_hh is a zero block the kernel adds like the others'.
// Zero blocks are positions no canonical element maps to.
struct StepLayerOffsets {
  int64_t w, bias_ih, bias_hh, norm_weight, norm_bias, end;
  int rows, columns;  // K, C
};
StepLayerOffsets step_layer_offsets(const CoreSpec& spec, int layer);
FlatLayout step_layout(const CoreSpec& spec);

// One entry of cudnnGetRNNWeightParams' answer.
struct OpaqueEntry {
  int pseudo_layer = 0;   // = layer (recur's cores are unidirectional)
  int lin_id = 0;         // cuDNN linLayerID: 0..G-1 act on x (W), G..2G-1 on h (R)
  bool bias = false;      // the bias query (bDesc) rather than the matrix query (mDesc)
  int64_t offset = -1;    // floats from the start of the weight space; -1 = cuDNN returned none
  std::vector<int> dims;  // the descriptor's dims (product = numel; 0 dims when absent)
};
struct OpaqueTable {
  int64_t size = 0;  // cudnnGetRNNWeightSpaceSize / sizeof(float)
  std::vector<OpaqueEntry> entries;
};
// Checks the table against the spec (every (layer, id, matrix|bias) once; numel = H*in_width or
// H; inside the buffer; no overlap) and builds the map. Throws recur::Error naming the entry.
FlatLayout opaque_layout(const CoreSpec& spec, const OpaqueTable& table);

// Canonical (flat order) -> buffer: zeroes `buffer` (gaps, zero blocks), then places every
// element. Buffer -> canonical: reads every element back.
void scatter_canonical(const FlatLayout& layout, std::span<const float> canonical,
                       std::span<float> buffer);
void gather_canonical(const FlatLayout& layout, std::span<const float> buffer,
                      std::span<float> canonical);

// Index for a direct conversion between two layouts of the same spec: dst[i] = src[index[i]],
// or 0 where index[i] = -1 (positions of `to` no canonical element maps to).
std::vector<int64_t> conversion_index(const FlatLayout& from, const FlatLayout& to);
// The host version of kernels::launch_gather, for the CPU side and for tests.
void apply_conversion(std::span<const int64_t> index, std::span<const float> src,
                      std::span<float> dst);

}  // namespace recur::policy
