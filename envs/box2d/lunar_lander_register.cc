// PLACEHOLDER (being written): registers nothing yet.
#include "envs/box2d/register.h"

namespace recur::envs {
void register_lunar_lander(Registry&) {}
}  // namespace recur::envs
