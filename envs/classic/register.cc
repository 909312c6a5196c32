// Gymnasium's classic-control registrations (gymnasium/envs/__init__.py) and their masked-velocity
// variants as rl-baselines3-zoo registers them (rl_zoo3/import_envs.py, wrappers.py).
#include <memory>

#include "envs/classic/acrobot.h"
#include "envs/classic/cartpole.h"
#include "envs/classic/continuous_mountain_car.h"
#include "envs/classic/mountain_car.h"
#include "envs/classic/pendulum.h"
#include "envs/registry.h"
#include "envs/wrappers/mask_velocity.h"

namespace recur::envs {
namespace {

template <typename E, typename Config>
std::unique_ptr<Env> build(OptionReader& options) {
  return std::make_unique<E>(Config::read(options));
}

}  // namespace

void register_classic_control(Registry& r) {
  register_with_novel(
      r,
      {"CartPole-v1", "classic_control", 500, 475.0,
       "balance a pole on a cart by pushing it left or right", build<CartPole, CartPoleConfig>},
      {1, 3});
  r.add({"CartPole-v0", "classic_control", 200, 195.0, "CartPole with the older 200-step limit",
         build<CartPole, CartPoleConfig>});
  register_with_novel(
      r,
      {"Pendulum-v1", "classic_control", 200, std::nullopt,
       "swing a pendulum upright with a bounded torque", build<Pendulum, PendulumConfig>},
      {2});
  register_with_novel(r,
                      {"MountainCar-v0", "classic_control", 200, -110.0,
                       "rock an under-powered car up a hill (discrete engine)",
                       build<MountainCar, MountainCarConfig>},
                      {1});
  register_with_novel(r,
                      {"MountainCarContinuous-v0", "classic_control", 999, 90.0,
                       "rock an under-powered car up a hill (continuous engine)",
                       build<ContinuousMountainCar, ContinuousMountainCarConfig>},
                      {1});
  r.add({"Acrobot-v1", "classic_control", 500, -100.0,
         "swing a two-link pendulum's tip above a line", build<Acrobot, AcrobotConfig>});
}

}  // namespace recur::envs
