// Gymnasium's BipedalWalker registrations (gymnasium/envs/__init__.py): BipedalWalker-v3 (1600
// steps) and BipedalWalkerHardcore-v3 (2000 steps), both solved at 300. No NoVel twins:
// rl-baselines3-zoo's MaskVelocityWrapper (rl_zoo3/wrappers.py) lists no BipedalWalker indices.
#include <memory>

#include "envs/box2d/bipedal_walker.h"
#include "envs/box2d/register.h"

namespace recur::envs {
namespace {

template <bool kHardcore>
std::unique_ptr<Env> build(OptionReader& options) {
  return std::make_unique<BipedalWalker>(BipedalWalkerConfig::read(options, kHardcore));
}

}  // namespace

void register_bipedal_walker(Registry& r) {
  r.add({"BipedalWalker-v3", "box2d", 1600, 300.0,
         "walk a 4-joint robot across gently rolling terrain", build<false>});
  r.add({"BipedalWalkerHardcore-v3", "box2d", 2000, 300.0,
         "walk a 4-joint robot over stumps, stairs and pits", build<true>});
}

}  // namespace recur::envs
