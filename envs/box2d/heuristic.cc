#include "envs/box2d/heuristic.h"

namespace recur::envs {

std::unique_ptr<HeuristicController> make_heuristic(std::string_view id) {
  if (id == "LunarLander-v3") return make_lunar_lander_heuristic(false);
  if (id == "LunarLanderContinuous-v3") return make_lunar_lander_heuristic(true);
  if (id == "BipedalWalker-v3" || id == "BipedalWalkerHardcore-v3")
    return make_bipedal_walker_heuristic();
  return nullptr;
}

}  // namespace recur::envs
