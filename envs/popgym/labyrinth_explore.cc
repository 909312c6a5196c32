#include "envs/popgym/labyrinth_explore.h"

namespace recur::envs {

Env::Outcome LabyrinthExplore::step_impl(std::span<const float> action) {
  last_action_ = static_cast<int>(action[0]);
  const bool fresh = enter(move(last_action_));
  Outcome out;
  out.reward = fresh ? 1.0 / free_cells() : neg_reward_;
  out.terminated = all_visited();
  return out;
}

}  // namespace recur::envs
