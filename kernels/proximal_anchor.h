// algo.async_anchor on the device: the proximal log-probs of a chunk of the rollout's env columns
// (the learner's forward over them) replace the behaviour log-probs there and scale the
// advantages by kernels::anchor_weight (kernels/learner_math.h), the formula the host updater
// runs. With algo.async_anchor_values the learner's critic values of the chunk replace the
// behaviour critic's too, and the weights wait for GAE over those values: each chunk is first
// scattered into rollout-wide arrays (launch_proximal_scatter), then GAE runs, then the anchor
// weights every row at once (launch_proximal_anchor with no rows), the order the host updater
// follows. Enqueued only; nothing comes back to the host.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/learner_math.h"

namespace recur::kernels {

// For k < m, with i = rows[k] (distinct rows of the rollout's (T, N) arrays), or i = k when rows
// is null (every row of the rollout, m = T * N):
//   advantages[i] *= anchor_weight(proximal[k], log_probs[i]);  log_probs[i] = proximal[k]
// rows (m or null), proximal (m), log_probs and advantages (T * N), all device memory.
void launch_proximal_anchor(const int32_t* rows, const float* proximal, int m, float* log_probs,
                            float* advantages, cudaStream_t stream);

// For k < m, with i = rows[k] (distinct rows of the rollout's (T, N) arrays):
//   proximal_out[i] = proximal[k];  values_out[i] = values[k] (when values is not null)
// rows, proximal, values (m), proximal_out and values_out (T * N), all device memory.
void launch_proximal_scatter(const int32_t* rows, const float* proximal, const float* values, int m,
                             float* proximal_out, float* values_out, cudaStream_t stream);

// Sample k of the chunk, written once for the kernel (one thread each) and the reference.
RECUR_HD inline void proximal_anchor_at(int k, const int32_t* rows, const float* proximal,
                                        float* log_probs, float* advantages) {
  const int32_t i = rows != nullptr ? rows[k] : k;
  advantages[i] *= anchor_weight(proximal[k], log_probs[i]);
  log_probs[i] = proximal[k];
}

RECUR_HD inline void proximal_scatter_at(int k, const int32_t* rows, const float* proximal,
                                         const float* values, float* proximal_out,
                                         float* values_out) {
  const int32_t i = rows[k];
  proximal_out[i] = proximal[k];
  if (values != nullptr) values_out[i] = values[k];
}

// The CPU references of the launches: every sample in turn.
inline void proximal_anchor_reference(const int32_t* rows, const float* proximal, int m,
                                      float* log_probs, float* advantages) {
  for (int k = 0; k < m; ++k) proximal_anchor_at(k, rows, proximal, log_probs, advantages);
}

inline void proximal_scatter_reference(const int32_t* rows, const float* proximal,
                                       const float* values, int m, float* proximal_out,
                                       float* values_out) {
  for (int k = 0; k < m; ++k)
    proximal_scatter_at(k, rows, proximal, values, proximal_out, values_out);
}

}  // namespace recur::kernels
