#include "envs/wrappers/mask_velocity.h"

#include <doctest/doctest.h>

#include "envs/registry.h"

TEST_CASE("NoVel envs equal their base env with velocities zeroed") {
  struct Case {
    const char* novel;
    const char* base;
    std::vector<int> masked;
  };
  for (const auto& c :
       {Case{"CartPoleNoVel-v1", "CartPole-v1", {1, 3}},
        Case{"PendulumNoVel-v1", "Pendulum-v1", {2}},
        Case{"MountainCarNoVel-v0", "MountainCar-v0", {1}},
        Case{"MountainCarContinuousNoVel-v0", "MountainCarContinuous-v0", {1}},
        Case{"LunarLanderNoVel-v3", "LunarLander-v3", {2, 3, 5}},
        Case{"LunarLanderContinuousNoVel-v3", "LunarLanderContinuous-v3", {2, 3, 5}}}) {
    CAPTURE(c.novel);
    auto novel = recur::envs::make(c.novel);
    auto base = recur::envs::make(c.base);
    CHECK(novel->max_episode_steps() == base->max_episode_steps());
    CHECK(novel->observation_space().to_string() == base->observation_space().to_string());
    auto compare = [&](std::span<const float> a, std::span<const float> b) {
      for (size_t i = 0; i < a.size(); ++i) {
        const bool is_masked = std::find(c.masked.begin(), c.masked.end(), i) != c.masked.end();
        CHECK(a[i] == (is_masked ? 0.0f : b[i]));
      }
    };
    compare(novel->reset(8), base->reset(8));
    std::vector<float> action(static_cast<size_t>(base->action_dim()), 1.0f);
    bool saw_motion = false;
    for (int t = 0; t < 50; ++t) {
      const auto rn = novel->step(action);
      const std::vector<float> on(rn.obs.begin(), rn.obs.end());
      const auto rb = base->step(action);
      compare(on, rb.obs);
      for (int i : c.masked) saw_motion = saw_motion || rb.obs[static_cast<size_t>(i)] != 0.0f;
      CHECK(rn.reward == rb.reward);
      if (rb.done()) break;
    }
    CHECK(saw_motion);  // the masked entries were non-zero in the base env
  }
}
