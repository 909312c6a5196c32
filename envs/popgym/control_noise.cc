#include "envs/popgym/control_noise.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"

namespace recur::envs {

std::array<float, ControlNoise::kSize> ControlNoise::draw(Rng& rng) const {
  // numpy's normal(0, sigma) is 0 + sigma * standard_normal, then .astype(np.float32).
  std::array<float, kSize> out{};
  for (float& v : out) v = static_cast<float>(sigma_ * rng.normal());
  return out;
}

void ControlNoise::reset(Rng& rng) {
  now_ = draw(rng);
  next_ = draw(rng);
}

void ControlNoise::advance(Rng& rng) {
  now_ = next_;
  next_ = draw(rng);
}

void ControlNoise::apply(std::span<float> obs, std::span<const float> low,
                         std::span<const float> high) const {
  // np.clip(obs + noise, low, high) = minimum(maximum(obs + noise, low), high).
  for (size_t i = 0; i < kSize; ++i) obs[i] = std::min(std::max(obs[i] + now_[i], low[i]), high[i]);
}

void ControlNoise::get_state(std::span<double> out) const {
  for (size_t i = 0; i < kSize; ++i) {
    out[i] = now_[i];
    out[kSize + i] = next_[i];
  }
}

void ControlNoise::set_state(std::span<const double> in, const char* owner) {
  constexpr double kMax = std::numeric_limits<float>::max();
  for (size_t i = 0; i < kStateSize; ++i)
    RECUR_CHECK_ARG(std::isfinite(in[i]) && std::abs(in[i]) <= kMax,
                    "{}: noise state[{}] = {} is not a finite float32 value", owner, i, in[i]);
  for (size_t i = 0; i < kSize; ++i) {
    now_[i] = static_cast<float>(in[i]);
    next_[i] = static_cast<float>(in[kSize + i]);
  }
}

}  // namespace recur::envs
