// PLACEHOLDER (being written).
#include "envs/box2d/heuristic.h"

namespace recur::envs {
std::unique_ptr<HeuristicController> make_bipedal_walker_heuristic() {
  return nullptr;
}
}  // namespace recur::envs
