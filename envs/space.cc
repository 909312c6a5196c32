#include "envs/space.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"

namespace recur::envs {

Space Space::discrete(int64_t n) {
  RECUR_CHECK_ARG(n > 0 && n <= (int64_t{1} << 24), "Discrete(n) needs 0 < n <= 2^24, got {}", n);
  Space s;
  s.kind_ = Kind::kDiscrete;
  s.n_ = n;
  s.shape_ = {};
  s.flat_size_ = 1;
  return s;
}

Space Space::box(std::vector<float> low, std::vector<float> high, std::vector<int> shape) {
  if (shape.empty()) shape = {static_cast<int>(low.size())};
  const int size = std::accumulate(shape.begin(), shape.end(), 1, std::multiplies<>());
  RECUR_CHECK_ARG(size > 0 && low.size() == static_cast<size_t>(size) && high.size() == low.size(),
                  "Box: low ({}) and high ({}) must have shape's {} elements", low.size(),
                  high.size(), size);
  for (size_t i = 0; i < low.size(); ++i)
    RECUR_CHECK_ARG(!std::isnan(low[i]) && !std::isnan(high[i]) && low[i] <= high[i],
                    "Box: bound {} is [{}, {}]; need low <= high", i, low[i], high[i]);
  Space s;
  s.kind_ = Kind::kBox;
  s.low_ = std::move(low);
  s.high_ = std::move(high);
  s.shape_ = std::move(shape);
  s.flat_size_ = size;
  return s;
}

Space Space::box(float low, float high, std::vector<int> shape) {
  const int size = std::accumulate(shape.begin(), shape.end(), 1, std::multiplies<>());
  return box(std::vector<float>(static_cast<size_t>(std::max(size, 0)), low),
             std::vector<float>(static_cast<size_t>(std::max(size, 0)), high), std::move(shape));
}

bool Space::contains(std::span<const float> value) const {
  if (value.size() != static_cast<size_t>(flat_size_)) return false;
  if (kind_ == Kind::kDiscrete) {
    const float v = value[0];
    return std::isfinite(v) && v == std::floor(v) && v >= 0 && v < static_cast<float>(n_);
  }
  for (size_t i = 0; i < value.size(); ++i) {
    // NaN fails both comparisons; +-inf only passes an infinite bound, as in numpy.
    if (!(value[i] >= low_[i] && value[i] <= high_[i])) return false;
  }
  return true;
}

void Space::sample(Rng& rng, std::span<float> out) const {
  RECUR_CHECK_ARG(out.size() == static_cast<size_t>(flat_size_),
                  "Space::sample: buffer holds {} floats, {} needs {}", out.size(), to_string(),
                  flat_size_);
  if (kind_ == Kind::kDiscrete) {
    out[0] = static_cast<float>(rng.uniform_int(static_cast<uint64_t>(n_)));
    return;
  }
  for (size_t i = 0; i < out.size(); ++i) {
    const bool lo = std::isfinite(low_[i]), hi = std::isfinite(high_[i]);
    double v;
    if (lo && hi) {
      v = rng.uniform(low_[i], high_[i]);
    } else if (lo) {
      v = low_[i] + rng.exponential();
    } else if (hi) {
      v = high_[i] - rng.exponential();
    } else {
      v = rng.normal();
    }
    // Rounding to float32 can land on the open upper end; keep samples inside the space.
    out[i] = std::clamp(static_cast<float>(v), low_[i], high_[i]);
  }
}

namespace {
std::string format_bound(float v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{}", v);
}
}  // namespace

std::string Space::to_string() const {
  if (kind_ == Kind::kDiscrete) return fmt::format("Discrete({})", n_);
  std::string shape = "(";
  for (size_t i = 0; i < shape_.size(); ++i) shape += fmt::format("{},", shape_[i]);
  if (shape_.size() > 1) shape.pop_back();
  shape += ")";
  const bool uniform =
      std::all_of(low_.begin(), low_.end(), [&](float v) { return v == low_[0]; }) &&
      std::all_of(high_.begin(), high_.end(), [&](float v) { return v == high_[0]; });
  auto list = [](const std::vector<float>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) s.push_back(' ');
      s.append(format_bound(v[i]));
    }
    s.push_back(']');
    return s;
  };
  if (uniform)
    return fmt::format("Box({}, {}, {}, float32)", format_bound(low_[0]), format_bound(high_[0]),
                       shape);
  return fmt::format("Box({}, {}, {}, float32)", list(low_), list(high_), shape);
}

}  // namespace recur::envs
