// algo.async_anchor on the device: the proximal log-probs of a chunk of the rollout's env columns
// (the learner's forward over them) replace the behaviour log-probs there and scale the
// advantages by kernels::anchor_weight (kernels/learner_math.h), the formula the host updater
// runs. Enqueued only; nothing comes back to the host.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/learner_math.h"

namespace recur::kernels {

// For k < m, with i = rows[k] (distinct rows of the rollout's (T, N) arrays):
//   advantages[i] *= anchor_weight(proximal[k], log_probs[i]);  log_probs[i] = proximal[k]
// rows (m), proximal (m), log_probs and advantages (T * N), all device memory.
void launch_proximal_anchor(const int32_t* rows, const float* proximal, int m, float* log_probs,
                            float* advantages, cudaStream_t stream);

// Sample k of the chunk, written once for the kernel (one thread each) and the reference.
RECUR_HD inline void proximal_anchor_at(int k, const int32_t* rows, const float* proximal,
                                        float* log_probs, float* advantages) {
  const int32_t i = rows[k];
  advantages[i] *= anchor_weight(proximal[k], log_probs[i]);
  log_probs[i] = proximal[k];
}

// The CPU reference of launch_proximal_anchor: every sample in turn.
inline void proximal_anchor_reference(const int32_t* rows, const float* proximal, int m,
                                      float* log_probs, float* advantages) {
  for (int k = 0; k < m; ++k) proximal_anchor_at(k, rows, proximal, log_probs, advantages);
}

}  // namespace recur::kernels
