// Gymnasium's heuristic(env, s) for LunarLander (gymnasium/envs/box2d/lunar_lander.py), a pure
// function of the observation. It reads the float32 observation and, as numpy does with a
// float32 array and Python floats (NEP 50), computes in float32.
#include <algorithm>
#include <cmath>

#include "envs/box2d/heuristic.h"

namespace recur::envs {
namespace {

class LunarLanderHeuristic final : public HeuristicController {
 public:
  explicit LunarLanderHeuristic(bool continuous) : continuous_(continuous) {}

  void act(std::span<const float> s, std::span<float> action) override {
    // Point towards the centre, at most 0.4 rad (22 degrees); hover at 0.55 |x|.
    const float angle_targ = std::clamp(s[0] * 0.5f + s[2] * 1.0f, -0.4f, 0.4f);
    const float hover_targ = 0.55f * std::abs(s[0]);
    float angle_todo = (angle_targ - s[4]) * 0.5f - s[5] * 1.0f;
    float hover_todo = (hover_targ - s[1]) * 0.5f - s[3] * 0.5f;
    if (s[6] != 0 || s[7] != 0) {  // legs touching: only slow the fall
      angle_todo = 0;
      hover_todo = -s[3] * 0.5f;
    }
    if (continuous_) {
      action[0] = std::clamp(hover_todo * 20 - 1, -1.0f, 1.0f);
      action[1] = std::clamp(-angle_todo * 20, -1.0f, 1.0f);
      return;
    }
    float a = 0;
    if (hover_todo > std::abs(angle_todo) && hover_todo > 0.05f) {
      a = 2;
    } else if (angle_todo < -0.05f) {
      a = 3;
    } else if (angle_todo > 0.05f) {
      a = 1;
    }
    action[0] = a;
  }

 private:
  bool continuous_;
};

}  // namespace

std::unique_ptr<HeuristicController> make_lunar_lander_heuristic(bool continuous) {
  return std::make_unique<LunarLanderHeuristic>(continuous);
}

}  // namespace recur::envs
