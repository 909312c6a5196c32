// PLACEHOLDER (being written).
#include "envs/box2d/heuristic.h"

namespace recur::envs {
std::unique_ptr<HeuristicController> make_lunar_lander_heuristic(bool) {
  return nullptr;
}
}  // namespace recur::envs
