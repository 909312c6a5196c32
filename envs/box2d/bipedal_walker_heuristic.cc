// Gymnasium's BipedalWalker gait (bipedal_walker.py, BipedalWalkerHeuristics.step_heuristic):
// a three-state machine (stay on one leg, put the other down, push off) with PD targets for hips
// and knees, plus a PID that keeps the hull level and damps vertical speed. Gymnasium's __main__
// drives it with a zero first action, then step_heuristic(obs) after every step.
//
// The arithmetic follows NumPy 2's types: obs entries are float32 scalars, so every expression
// that touches one is float32 (Python float constants become float32, NEP 50); the action is
// stored as float64 and 0.5 * clip'd. supporting_knee_angle is a Python float until push-off
// copies a float32 knee reading into it, and float32 from then on until min() returns 0.1 again.
#include <algorithm>
#include <cmath>
#include <optional>

#include "envs/box2d/heuristic.h"

namespace recur::envs {
namespace {

class BipedalWalkerHeuristic final : public HeuristicController {
 public:
  BipedalWalkerHeuristic() { reset(); }

  void reset() override {
    state_ = kStayOnOneLeg;
    moving_leg_ = 0;
    supporting_leg_ = 1;
    knee_ = {kSupportKneeAngle, false};
  }

  void first_action(std::span<const float>, std::span<float> action) override {
    std::fill(action.begin(), action.end(), 0.0f);  // Gymnasium's loop starts with a = [0, 0, 0, 0]
  }

  void act(std::span<const float> s, std::span<float> action) override {
    const size_t moving_base = 4 + 5 * static_cast<size_t>(moving_leg_);
    const size_t supporting_base = 4 + 5 * static_cast<size_t>(supporting_leg_);
    std::optional<double> hip_targ[2], knee_targ[2];

    if (state_ == kStayOnOneLeg) {
      hip_targ[moving_leg_] = 1.1;
      knee_targ[moving_leg_] = -0.6;
      knee_.add(0.03);
      if (s[2] > static_cast<float>(kSpeed)) knee_.add(0.03);
      knee_.min_with_support();
      knee_targ[supporting_leg_] = knee_.value;
      if (s[supporting_base] < 0.10f) state_ = kPutOtherDown;  // supporting leg is behind
    }
    if (state_ == kPutOtherDown) {
      hip_targ[moving_leg_] = +0.1;
      knee_targ[moving_leg_] = kSupportKneeAngle;
      knee_targ[supporting_leg_] = knee_.value;
      if (s[moving_base + 4] != 0) {
        state_ = kPushOff;
        const float knee = s[moving_base + 2];  // min(s[...], 0.1) compared as float32
        knee_ = static_cast<float>(kSupportKneeAngle) < knee ? Knee{kSupportKneeAngle, false}
                                                             : Knee{knee, true};
      }
    }
    if (state_ == kPushOff) {
      knee_targ[moving_leg_] = knee_.value;
      knee_targ[supporting_leg_] = +1.0;
      if (s[supporting_base + 2] > 0.88f || s[2] > static_cast<float>(1.2 * kSpeed)) {
        state_ = kStayOnOneLeg;
        moving_leg_ = 1 - moving_leg_;
        supporting_leg_ = 1 - moving_leg_;
      }
    }

    // Python's `if target:` skips unset and zero targets.
    auto set = [](const std::optional<double>& t) { return t.has_value() && *t != 0; };
    auto f = [](double v) { return static_cast<float>(v); };
    float hip_todo[2] = {0, 0}, knee_todo[2] = {0, 0};
    if (set(hip_targ[0])) hip_todo[0] = 0.9f * (f(*hip_targ[0]) - s[4]) - 0.25f * s[5];
    if (set(hip_targ[1])) hip_todo[1] = 0.9f * (f(*hip_targ[1]) - s[9]) - 0.25f * s[10];
    if (set(knee_targ[0])) knee_todo[0] = 4.0f * (f(*knee_targ[0]) - s[6]) - 0.25f * s[7];
    if (set(knee_targ[1])) knee_todo[1] = 4.0f * (f(*knee_targ[1]) - s[11]) - 0.25f * s[12];

    for (float& h : hip_todo) h -= 0.9f * (0 - s[0]) - 1.5f * s[1];  // keep the head straight
    for (float& k : knee_todo) k -= 15.0f * s[3];  // vertical speed, to damp oscillations

    const float todo[4] = {hip_todo[0], knee_todo[0], hip_todo[1], knee_todo[1]};
    for (size_t k = 0; k < 4; ++k)
      action[k] = static_cast<float>(std::clamp(0.5 * static_cast<double>(todo[k]), -1.0, 1.0));
  }

 private:
  static constexpr int kStayOnOneLeg = 1, kPutOtherDown = 2, kPushOff = 3;
  static constexpr double kSpeed = 0.29;  // will fall forward on higher speed
  static constexpr double kSupportKneeAngle = +0.1;

  // supporting_knee_angle with its Python type (float64 or float32).
  struct Knee {
    double value = kSupportKneeAngle;
    bool is_f32 = false;
    void add(double d) {
      value = is_f32 ? static_cast<double>(static_cast<float>(value) + static_cast<float>(d))
                     : value + d;
    }
    void min_with_support() {  // min(value, SUPPORT_KNEE_ANGLE)
      const bool smaller = is_f32
                               ? static_cast<float>(kSupportKneeAngle) < static_cast<float>(value)
                               : kSupportKneeAngle < value;
      if (smaller) *this = {kSupportKneeAngle, false};
    }
  };

  int state_ = kStayOnOneLeg;
  int moving_leg_ = 0;
  int supporting_leg_ = 1;
  Knee knee_;
};

}  // namespace

std::unique_ptr<HeuristicController> make_bipedal_walker_heuristic() {
  return std::make_unique<BipedalWalkerHeuristic>();
}

}  // namespace recur::envs
