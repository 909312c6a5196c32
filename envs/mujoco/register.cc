#include "envs/registry.h"

namespace recur::envs {

void register_mujoco(Registry& /*r*/) {}

}  // namespace recur::envs
