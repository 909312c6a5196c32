#include "envs/box2d/register.h"

namespace recur::envs {

void register_box2d(Registry& r) {
  register_lunar_lander(r);
  register_bipedal_walker(r);
}

}  // namespace recur::envs
