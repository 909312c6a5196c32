#include "agent/dist/moments.h"

#include <algorithm>

#include "agent/dist/communicator.h"
#include "core/error.h"
#include "core/moments.h"

namespace recur::agent::dist {

void Moments::clear() {
  count = 0;
  std::fill(mean.begin(), mean.end(), 0.0);
  std::fill(m2.begin(), m2.end(), 0.0);
}

void Moments::add(int n, std::span<const float> batch) {
  const auto d = mean.size();
  RECUR_ASSERT(n >= 0 && batch.size() == static_cast<size_t>(n) * d);
  if (n == 0) return;
  batch_mean_.resize(d);
  batch_m2_.resize(d);
  batch_moments(n, batch, batch_mean_, batch_m2_);
  add(static_cast<double>(n), batch_mean_, batch_m2_);
}

void Moments::add(double n, std::span<const double> bmean, std::span<const double> bm2) {
  RECUR_ASSERT(bmean.size() == mean.size() && bm2.size() == mean.size());
  if (n <= 0) return;
  for (size_t j = 0; j < mean.size(); ++j)
    merge_moments(count, n, bmean[j], bm2[j], mean[j], m2[j]);
  count += n;
}

std::vector<double> Moments::variance() const {
  std::vector<double> v(mean.size(), 0.0);
  if (count > 0)
    for (size_t j = 0; j < v.size(); ++j) v[j] = m2[j] / count;
  return v;
}

Moments combine(std::span<const Moments> parts) {
  RECUR_ASSERT(!parts.empty());
  const auto d = parts.front().mean.size();
  Moments out(static_cast<int>(d));
  for (const auto& p : parts) {
    out.count += p.count;
    for (size_t j = 0; j < d; ++j) out.mean[j] += p.count * p.mean[j];
  }
  if (out.count <= 0) return Moments(static_cast<int>(d));
  for (auto& m : out.mean) m /= out.count;
  for (const auto& p : parts)
    for (size_t j = 0; j < d; ++j) {
      const double dev = p.mean[j] - out.mean[j];
      out.m2[j] += p.m2[j] + p.count * dev * dev;
    }
  return out;
}

Moments all_reduce_moments(Communicator& comm, const Moments& local, std::string_view what) {
  const auto d = local.mean.size();
  // First the counts and the weighted sums, then the squared deviations about the global mean:
  // the same formula as combine(), with the ranks as the partitions.
  std::vector<double> sums(d + 1);
  sums[0] = local.count;
  for (size_t j = 0; j < d; ++j) sums[j + 1] = local.count * local.mean[j];
  comm.all_reduce_sum(sums, what);
  Moments out(static_cast<int>(d));
  out.count = sums[0];
  if (out.count <= 0) return out;
  for (size_t j = 0; j < d; ++j) out.mean[j] = sums[j + 1] / out.count;
  for (size_t j = 0; j < d; ++j) {
    const double dev = local.mean[j] - out.mean[j];
    out.m2[j] = local.m2[j] + local.count * dev * dev;
  }
  comm.all_reduce_sum(out.m2, what);
  return out;
}

}  // namespace recur::agent::dist
