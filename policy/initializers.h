// Parameter initializers with torch.nn.init's definitions (not its random streams: values come
// from recur's Rng, so a seed gives the same network on every platform).
#pragma once

#include <span>

#include "core/rng.h"

namespace recur::policy {

// torch.nn.init.orthogonal_(W, gain) for W (rows, cols) row-major: the Q of a QR decomposition of
// a standard normal matrix (of its transpose when rows < cols), columns signed so that R's
// diagonal is positive, times gain. Rows (or columns, whichever are fewer) come out orthonormal
// before the gain. Draws rows * cols normals, row-major.
void orthogonal_init(int rows, int cols, float gain, Rng& rng, std::span<float> w);

// Every value ~ U(-bound, bound), in order: nn.Linear's default (kaiming_uniform with a = sqrt(5)
// for the weight, which works out to bound = 1/sqrt(in), and the same bound for the bias).
void uniform_init(double bound, Rng& rng, std::span<float> w);

}  // namespace recur::policy
