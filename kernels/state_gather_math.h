// The initial recurrent states of a batch of sub-sequences, gathered from a table of stored
// states, written once for both devices: the device kernel (kernels/state_gather.h) and the CPU
// reference below run initial_state_at. It replaces three host copies of the CUDA learner (the
// engine's per-minibatch env gather, the learner's per-tower split and the cuDNN executor's
// (L, N, H) assembly): the rollout's stored states stay on the device, and one index per
// sub-sequence says which table row starts it.
//
// Table row r holds one slot's state for one core, [h of layer 0..L-1 | c of layer 0..L-1], each
// H floats (c only for an LSTM), starting at table + r * stride (stride >= the core's state size:
// a tower's part of the policy's [actor core | critic core] state is the table pointer offset by
// the tower's start, with the whole state's stride). Output hx, cx are cuDNN's (L, N, H): row n
// of layer k is table row rows[n]'s h (c) of layer k, or zeros when rows[n] < 0 (an episode
// starts the sub-sequence). Plain C++ without nvcc.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/learner_math.h"  // RECUR_HD

namespace recur::kernels {

// Element (k, n, j) of hx (cell = false) or cx (cell = true).
RECUR_HD inline float initial_state_at(const float* table, size_t stride, const int32_t* rows,
                                       int L, int H, bool cell, int k, int n, int j) {
  const int32_t r = rows[n];
  if (r < 0) return 0.0f;
  const int layer = cell ? L + k : k;
  return table[static_cast<size_t>(r) * stride + static_cast<size_t>(layer) * H + j];
}

// The CPU reference of launch_gather_initial_states: hx (and cx when cx != null) (L, N, H).
inline void gather_initial_states_reference(const float* table, size_t stride, const int32_t* rows,
                                            int N, int L, int H, float* hx, float* cx) {
  for (int k = 0; k < L; ++k)
    for (int n = 0; n < N; ++n)
      for (int j = 0; j < H; ++j) {
        const size_t at = (static_cast<size_t>(k) * N + n) * H + j;
        hx[at] = initial_state_at(table, stride, rows, L, H, false, k, n, j);
        if (cx != nullptr) cx[at] = initial_state_at(table, stride, rows, L, H, true, k, n, j);
      }
}

}  // namespace recur::kernels
