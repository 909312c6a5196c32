// Gymnasium's Box2D envs (gymnasium/envs/box2d/), on Debian's Box2D 2.4.1. Each family file
// registers its ids; envs/box2d/register.cc calls them from register_box2d().
#pragma once

#include "envs/registry.h"

namespace recur::envs {

void register_lunar_lander(Registry& registry);    // envs/box2d/lunar_lander_register.cc
void register_bipedal_walker(Registry& registry);  // envs/box2d/bipedal_walker_register.cc

}  // namespace recur::envs
