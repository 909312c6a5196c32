// Per-feature count, mean and sum of squared deviations (M2) of a stream, merged exactly: how
// the ranks of a data-parallel job agree on the observation and reward normalizers' statistics
// (docs/ARCHITECTURE.md "Scaling out").
//
// Two partitions (Chan et al.): n = na + nb, d = mb - ma, mean = ma + d nb / n,
// M2 = M2a + M2b + d^2 na nb / n. Many partitions at once: n = sum ni, mean = sum ni mi / n,
// M2 = sum (M2i + ni (mi - mean)^2), which all_reduce_moments computes with two all-reduces. Each
// rank accumulates the observations it saw since the last agreement, the ranks combine those
// deltas, and every rank merges the same combined delta into the same agreed statistics: the
// result is the statistics of every observation of every rank, identical on all ranks, and no
// observation counts twice.
#pragma once

#include <span>
#include <string_view>
#include <vector>

namespace recur::agent::dist {

class Communicator;

struct Moments {
  double count = 0;
  std::vector<double> mean, m2;  // (dim)

  Moments() = default;
  explicit Moments(int dim) : mean(static_cast<size_t>(dim), 0.0), m2(static_cast<size_t>(dim)) {}
  int dim() const { return static_cast<int>(mean.size()); }
  void clear();
  // Merges a batch (n, dim) of samples.
  void add(int n, std::span<const float> batch);
  // Merges a batch given by its own count, mean and M2 (dim values each).
  void add(double n, std::span<const double> mean, std::span<const double> m2);
  void add(const Moments& other) { add(other.count, other.mean, other.m2); }
  // Population variance M2 / count per feature (0 where count is 0).
  std::vector<double> variance() const;

 private:
  std::vector<double> batch_mean_, batch_m2_;  // add(n, batch)'s workspace: no allocation
};

// The moments of all partitions together (the many-partition formula, in order).
Moments combine(std::span<const Moments> parts);
// The moments of every rank's `local` together, on every rank (the same bits everywhere).
Moments all_reduce_moments(Communicator& comm, const Moments& local, std::string_view what);

}  // namespace recur::agent::dist
