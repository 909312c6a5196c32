// Running mean and variance of a stream, batch by batch (Chan, Golub, LeVeque: two partitions of
// sizes na, nb with means ma, mb and sums of squared deviations M2a, M2b merge to n = na + nb,
// d = mb - ma, mean = ma + d nb / n, M2 = M2a + M2b + d^2 na nb / n). One place for the arithmetic
// that the observation normalizer (policy/obs_normalizer.h), the reward normalizer
// (agent/actor_loop.h) and the data-parallel statistics (agent/dist/moments.h) share. The order
// of the operations is part of the contract: runs and their resumes are bit-exact only while it
// stays the same.
#pragma once

#include <cstddef>
#include <span>

namespace recur {

// The mean and M2 of each of the d = mean.size() features over n rows of `batch` (n, d): two
// passes in float64 (exact enough, and independent of the running statistics).
inline void batch_moments(int n, std::span<const float> batch, std::span<double> mean,
                          std::span<double> m2) {
  const size_t d = mean.size();
  for (auto& m : mean) m = 0.0;
  for (auto& m : m2) m = 0.0;
  for (size_t k = 0; k < batch.size(); ++k) mean[k % d] += static_cast<double>(batch[k]);
  const double nb = n;
  for (auto& m : mean) m /= nb;
  for (size_t k = 0; k < batch.size(); ++k) {
    const double dev = static_cast<double>(batch[k]) - mean[k % d];
    m2[k % d] += dev * dev;
  }
}

// Merges a batch of n samples with mean batch_mean and sum of squared deviations batch_m2 into
// statistics of `count` samples (mean, m2 updated in place; the caller adds n to its count).
inline void merge_moments(double count, double n, double batch_mean, double batch_m2, double& mean,
                          double& m2) {
  const double total = count + n;
  const double delta = batch_mean - mean;
  m2 = m2 + batch_m2 + delta * delta * count * n / total;
  mean += delta * n / total;
}

}  // namespace recur
