// Observation and action spaces, as Gymnasium's Discrete(n) and Box(low, high, shape, float32).
//
// Values of either kind travel as float32 buffers: a Box of shape (d,) is d floats; a Discrete
// value is one float holding an integer in [0, n). One representation keeps VectorEnv buffers,
// policies and recordings uniform; float32 holds every index up to 2^24 exactly.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/rng.h"

namespace recur::envs {

class Space {
 public:
  enum class Kind { kDiscrete, kBox };

  static Space discrete(int64_t n);
  // Box with per-element bounds; low/high may hold -inf/+inf. shape defaults to (low.size(),).
  static Space box(std::vector<float> low, std::vector<float> high, std::vector<int> shape = {});
  // Box with the same bounds for every element.
  static Space box(float low, float high, std::vector<int> shape);

  Kind kind() const { return kind_; }
  bool is_discrete() const { return kind_ == Kind::kDiscrete; }
  int64_t n() const { return n_; }  // Discrete only
  const std::vector<float>& low() const { return low_; }
  const std::vector<float>& high() const { return high_; }
  const std::vector<int>& shape() const { return shape_; }
  // Floats in one value: 1 for Discrete, product of shape for Box.
  int flat_size() const { return flat_size_; }

  // True when `value` is a member: right size, finite where bounded, within bounds; for Discrete
  // an integer in [0, n).
  bool contains(std::span<const float> value) const;
  // A uniform-ish sample as Gymnasium draws it: Discrete uniform; Box uniform where bounded on
  // both sides, exponential beyond a single bound, normal where unbounded.
  void sample(Rng& rng, std::span<float> out) const;

  // "Discrete(2)", "Box(-2.0, 2.0, (1,), float32)", "Box([-4.8 -inf ...], [...], (4,), float32)".
  std::string to_string() const;

 private:
  Kind kind_ = Kind::kDiscrete;
  int64_t n_ = 0;
  std::vector<float> low_, high_;
  std::vector<int> shape_;
  int flat_size_ = 1;
};

}  // namespace recur::envs
