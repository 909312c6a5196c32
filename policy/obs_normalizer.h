// Running observation normalization, as SB3's VecNormalize / RunningMeanStd:
//
//   out = clip((x - mean) / sqrt(var + epsilon), -clip, clip)      per feature
//
// update() merges each batch's mean and (population) variance into the running ones by Chan's
// parallel formula, in float64 so that millions of samples do not drift. The running count starts
// at a small initial_count with mean 0 and var 1 (SB3's 1e-4): a weak prior that keeps the first
// normalization finite.
//
// normalize() uses the statistics rounded to float32, the precision they are exported in, so a
// normalizer restored from its tensors normalizes bit-identically to the one that saved them
// (further updates then continue from the rounded statistics).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "policy/aligned.h"
#include "policy/tensor.h"

namespace recur::policy {

struct ObsNormalizerConfig {
  float clip = 10.0f;           // |out| <= clip; must be > 0
  double epsilon = 1e-8;        // added to var under the square root; >= 0
  double initial_count = 1e-4;  // prior weight of mean 0, var 1; >= 0
  // Throws recur::Error naming the bad field.
  void validate() const;
};

class ObsNormalizer {
 public:
  explicit ObsNormalizer(int dim, ObsNormalizerConfig config = {});

  int dim() const { return dim_; }
  const ObsNormalizerConfig& config() const { return config_; }

  // Merges batch (n, dim) into the statistics; does nothing when frozen.
  void update(int n, std::span<const float> batch);
  // in (n, dim) -> out (n, dim); out may be in itself.
  void normalize(int n, std::span<const float> in, std::span<float> out) const;

  // Frozen: update() is ignored (evaluation, or a finished training run).
  void set_frozen(bool frozen) { frozen_ = frozen; }
  bool frozen() const { return frozen_; }

  // The float32 statistics normalize() computes with, (dim) each: mean and
  // sqrt(var + epsilon), rounded as it rounds them (the ONNX export bakes these in, so that its
  // normalized observations are bit-identical to normalize()'s).
  std::span<const float> normalize_mean() const { return mean_f_; }
  std::span<const float> normalize_std() const { return std_f_; }

  std::span<const double> mean() const { return mean_; }  // (dim)
  std::span<const double> var() const { return var_; }    // (dim)
  double count() const { return count_; }
  // Replaces the statistics (var >= 0, count >= 0; throws std::invalid_argument otherwise).
  void set_statistics(std::span<const double> mean, std::span<const double> var, double count);

  // "{prefix}mean" (dim), "{prefix}var" (dim), "{prefix}count" (scalar), float32.
  TensorMap to_tensors(const std::string& prefix = "obs_norm.") const;
  // Throws recur::Error naming a missing tensor, a wrong shape or an invalid value (and changes
  // nothing then).
  void load_tensors(const TensorMap& tensors, const std::string& prefix = "obs_norm.");

 private:
  void refresh_float_statistics();

  int dim_;
  ObsNormalizerConfig config_;
  bool frozen_ = false;
  double count_;
  std::vector<double> mean_, var_;             // (dim): the running statistics
  std::vector<double> batch_mean_, batch_m2_;  // (dim): update()'s workspace
  AlignedVector<float> mean_f_, std_f_;        // (dim): what normalize() uses
};

}  // namespace recur::policy
