#include "envs/popgym/labyrinth_escape.h"

namespace recur::envs {

Env::Outcome LabyrinthEscape::step_impl(std::span<const float> action) {
  last_action_ = static_cast<int>(action[0]);
  enter(move(last_action_));
  Outcome out;
  out.reward = neg_reward_;
  if (cell(position_) == boards::kGoal) {
    out.reward += 1.0;
    out.terminated = true;
  }
  return out;
}

}  // namespace recur::envs
