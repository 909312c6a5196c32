#include "policy/obs_normalizer.h"

#include <algorithm>
#include <cmath>

#include <fmt/ranges.h>

#include "core/error.h"
#include "core/moments.h"

namespace recur::policy {

void ObsNormalizerConfig::validate() const {
  RECUR_CHECK(clip > 0.0f, "obs normalizer clip must be > 0, got {}", clip);
  RECUR_CHECK(epsilon >= 0.0 && std::isfinite(epsilon),
              "obs normalizer epsilon must be finite and >= 0, got {}", epsilon);
  RECUR_CHECK(initial_count >= 0.0 && std::isfinite(initial_count),
              "obs normalizer initial_count must be finite and >= 0, got {}", initial_count);
}

ObsNormalizer::ObsNormalizer(int dim, ObsNormalizerConfig config)
    : dim_(dim), config_(config), count_(config.initial_count) {
  RECUR_CHECK(dim > 0, "obs normalizer dim must be positive, got {}", dim);
  config_.validate();
  const auto d = static_cast<size_t>(dim);
  mean_.assign(d, 0.0);
  var_.assign(d, 1.0);
  batch_mean_.assign(d, 0.0);
  batch_m2_.assign(d, 0.0);
  mean_f_.assign(d, 0.0f);
  std_f_.assign(d, 0.0f);
  refresh_float_statistics();
}

void ObsNormalizer::update(int n, std::span<const float> batch) {
  RECUR_CHECK_ARG(n >= 0 && batch.size() == static_cast<size_t>(n) * static_cast<size_t>(dim_),
                  "ObsNormalizer.update: n {} with a batch of {} floats (want n x {})", n,
                  batch.size(), dim_);
  if (frozen_ || n == 0) return;
  batch_moments(n, batch, batch_mean_, batch_m2_);
  const double nb = n, total = count_ + nb;
  for (size_t j = 0; j < batch_mean_.size(); ++j) {
    double m2 = var_[j] * count_;  // the statistics are kept as variances
    merge_moments(count_, nb, batch_mean_[j], batch_m2_[j], mean_[j], m2);
    var_[j] = m2 / total;
  }
  count_ = total;
  refresh_float_statistics();
}

void ObsNormalizer::normalize(int n, std::span<const float> in, std::span<float> out) const {
  const size_t size = static_cast<size_t>(n) * static_cast<size_t>(dim_);
  RECUR_CHECK_ARG(n >= 0 && in.size() == size && out.size() == size,
                  "ObsNormalizer.normalize: n {} with in of {} and out of {} floats (want n x {})",
                  n, in.size(), out.size(), dim_);
  const auto d = static_cast<size_t>(dim_);
  for (size_t k = 0; k < size; ++k) {
    const float z = (in[k] - mean_f_[k % d]) / std_f_[k % d];
    out[k] = std::clamp(z, -config_.clip, config_.clip);
  }
}

void ObsNormalizer::refresh_float_statistics() {
  for (size_t j = 0; j < mean_.size(); ++j) {
    mean_f_[j] = static_cast<float>(mean_[j]);
    const auto var_f = static_cast<float>(var_[j]);
    std_f_[j] = static_cast<float>(std::sqrt(static_cast<double>(var_f) + config_.epsilon));
  }
}

void ObsNormalizer::set_statistics(std::span<const double> mean, std::span<const double> var,
                                   double count) {
  RECUR_CHECK_ARG(mean.size() == static_cast<size_t>(dim_) && var.size() == mean.size(),
                  "ObsNormalizer.set_statistics: mean {} and var {} values, want dim {}",
                  mean.size(), var.size(), dim_);
  RECUR_CHECK_ARG(std::isfinite(count) && count >= 0.0,
                  "ObsNormalizer.set_statistics: count {} must be finite and >= 0", count);
  for (size_t j = 0; j < mean.size(); ++j)
    RECUR_CHECK_ARG(std::isfinite(mean[j]) && std::isfinite(var[j]) && var[j] >= 0.0,
                    "ObsNormalizer.set_statistics: feature {} has mean {} var {} (need finite, "
                    "var >= 0)",
                    j, mean[j], var[j]);
  std::copy(mean.begin(), mean.end(), mean_.begin());
  std::copy(var.begin(), var.end(), var_.begin());
  count_ = count;
  refresh_float_statistics();
}

TensorMap ObsNormalizer::to_tensors(const std::string& prefix) const {
  TensorMap out;
  const int64_t d = dim_;
  out[prefix + "mean"] = Tensor({d}, std::vector<float>(mean_f_.begin(), mean_f_.end()));
  std::vector<float> var(mean_.size());
  std::transform(var_.begin(), var_.end(), var.begin(),
                 [](double v) { return static_cast<float>(v); });
  out[prefix + "var"] = Tensor({d}, std::move(var));
  out[prefix + "count"] = Tensor({}, {static_cast<float>(count_)});
  return out;
}

void ObsNormalizer::load_tensors(const TensorMap& tensors, const std::string& prefix) {
  auto find = [&](const std::string& name, std::vector<int64_t> shape) -> const Tensor& {
    const auto it = tensors.find(prefix + name);
    RECUR_CHECK(it != tensors.end(), "tensor '{}' is missing (the observation normalizer needs it)",
                prefix + name);
    RECUR_CHECK(it->second.shape == shape &&
                    it->second.data.size() == static_cast<size_t>(it->second.numel()),
                "tensor '{}' has shape [{}], expected [{}] for observations of {} features",
                prefix + name, fmt::join(it->second.shape, ", "), fmt::join(shape, ", "), dim_);
    return it->second;
  };
  const Tensor& mean = find("mean", {dim_});
  const Tensor& var = find("var", {dim_});
  const Tensor& count = find("count", {});
  const float c = count.data[0];
  RECUR_CHECK(std::isfinite(c) && c >= 0.0f, "tensor '{}count' holds {}, expected a count >= 0",
              prefix, c);
  for (size_t j = 0; j < mean.data.size(); ++j)
    RECUR_CHECK(std::isfinite(mean.data[j]) && std::isfinite(var.data[j]) && var.data[j] >= 0.0f,
                "tensors '{}mean'/'{}var' hold mean {} var {} for feature {} (need finite values, "
                "var >= 0)",
                prefix, prefix, mean.data[j], var.data[j], j);
  for (size_t j = 0; j < mean.data.size(); ++j) {
    mean_[j] = static_cast<double>(mean.data[j]);
    var_[j] = static_cast<double>(var.data[j]);
  }
  count_ = static_cast<double>(c);
  refresh_float_statistics();
}

}  // namespace recur::policy
