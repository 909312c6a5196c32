// The dynamic loss scale of fp16 gradients (device.cudnn_data: fp16 on the CUDA learner): the
// factor cuDNN's backward multiplies dy by before casting it to half precision, so that small
// gradients do not flush to zero, and divides out afterwards (policy/cudnn/
// cudnn_sequence_executor.h). Too large a factor overflows a gradient to infinity; PyTorch's
// GradScaler answers by skipping that step and halving the factor, and doubles it again after
// 2000 steps without one. The same rule here, decided once per update from the results the
// updater reads anyway: the cores' factor is a kernel argument set on the host between updates
// (no device-side scale, no extra host read), so within an update each minibatch that overflows
// is skipped and the scale comes down once, after it.
#pragma once

#include <algorithm>

namespace recur::agent {

class LossScale {
 public:
  static constexpr float kMin = 1.0f;        // below 1 a scale would only lose range
  static constexpr float kMax = 65536.0f;    // GradScaler's initial scale
  static constexpr int kGrowthSteps = 2000;  // GradScaler's growth_interval, in steps taken

  explicit LossScale(float initial) : value_(initial) {}

  float value() const { return value_; }
  int clean_steps() const { return clean_steps_; }
  // A minibatch with a finite loss and a non-finite gradient norm is this scale's overflow only
  // while the scale is above 1; at 1 a non-finite gradient is the data's own, and the updater's
  // algo.on_nonfinite decides as for any non-finite minibatch.
  bool tolerates_overflow() const { return value_ > kMin; }

  // After an update with `overflows` overflowed minibatches and `steps` steps taken. True when
  // the scale changed.
  bool after_update(int overflows, int steps) {
    const float before = value_;
    if (overflows > 0) {
      value_ = std::max(kMin, value_ * 0.5f);
      clean_steps_ = 0;
    } else {
      clean_steps_ += steps;
      if (clean_steps_ >= kGrowthSteps) {
        value_ = std::min(kMax, value_ * 2.0f);
        clean_steps_ = 0;
      }
    }
    return value_ != before;
  }

 private:
  float value_;
  int clean_steps_ = 0;
};

}  // namespace recur::agent
