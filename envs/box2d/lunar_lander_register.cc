// Gymnasium's LunarLander registrations (gymnasium/envs/__init__.py) and their masked-velocity
// twins as rl-baselines3-zoo registers them (rl_zoo3/wrappers.py MaskVelocityWrapper: obs
// indices 2, 3 (linear velocity) and 5 (angular velocity) are zeroed).
#include <memory>

#include "envs/box2d/lunar_lander.h"
#include "envs/box2d/register.h"
#include "envs/wrappers/mask_velocity.h"

namespace recur::envs {

void register_lunar_lander(Registry& r) {
  for (const bool continuous : {false, true}) {
    register_with_novel(
        r,
        {continuous ? "LunarLanderContinuous-v3" : "LunarLander-v3", "box2d", 1000, 200.0,
         continuous ? "land a rocket on the pad (continuous main and side throttles)"
                    : "land a rocket on the pad (fire the main or a side engine)",
         [continuous](OptionReader& options) -> std::unique_ptr<Env> {
           return std::make_unique<LunarLander>(LunarLanderConfig::read(options, continuous));
         }},
        {2, 3, 5});
  }
}

}  // namespace recur::envs
