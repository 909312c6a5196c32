// Gymnasium's hand-written controllers for its Box2D envs (lunar_lander.py's heuristic(),
// bipedal_walker.py's __main__ gait), ported. They are the envs' statistical parity test: a
// controller's score distribution over many episodes is compared with Gymnasium's
// (tests/envs/box2d/, `recur demo --heuristic`).
#pragma once

#include <memory>
#include <span>
#include <string_view>

namespace recur::envs {

class HeuristicController {
 public:
  virtual ~HeuristicController() = default;
  // Called at the start of every episode (controllers with an internal state machine reset it).
  virtual void reset() {}
  // Writes the action for observation `obs` (the env's unmasked observation).
  virtual void act(std::span<const float> obs, std::span<float> action) = 0;
  // The episode's first action, for the reset observation. Gymnasium's loops differ here:
  // LunarLander's demo acts on the reset observation (the default); BipedalWalker's __main__ gait
  // steps a zero action first and acts on the observations that steps return.
  virtual void first_action(std::span<const float> obs, std::span<float> action) {
    act(obs, action);
  }
};

// The controller for a registered id (NoVel ids excluded: Gymnasium's controllers read the
// velocities), or nullptr when Gymnasium has none for it.
std::unique_ptr<HeuristicController> make_heuristic(std::string_view env_id);

// Per family (envs/box2d/lunar_lander_heuristic.cc, envs/box2d/bipedal_walker_heuristic.cc).
std::unique_ptr<HeuristicController> make_lunar_lander_heuristic(bool continuous);
std::unique_ptr<HeuristicController> make_bipedal_walker_heuristic();

}  // namespace recur::envs
