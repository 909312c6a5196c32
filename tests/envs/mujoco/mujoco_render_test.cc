// Rendering of the MuJoCo envs (envs/mujoco/mujoco_render.h): Gymnasium's frame size and fps,
// the view each model gets, the torso drawn where the camera puts it, a floor that shows motion,
// and no allocation per frame. Every registered id's generic checks are in render_test.cc. Each
// case skips where recur was built without MuJoCo (RECUR_HAVE_MUJOCO, tests/CMakeLists.txt).
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "envs/registry.h"
#include "envs/render/renderer.h"
#include "tests/support/alloc_counter.h"
#include "tests/support/skip.h"

#ifdef RECUR_HAVE_MUJOCO
#include "envs/mujoco/mujoco_env.h"
#include "envs/mujoco/mujoco_render.h"
#endif

namespace {

using recur::envs::render::Frame;
using recur::envs::render::Renderer;

[[maybe_unused]] int differing_rows(const Frame& a, const Frame& b, int row0, int row1) {
  int n = 0;
  for (int y = row0; y < row1; ++y) {
    const auto ra = a.row(y), rb = b.row(y);
    for (size_t i = 0; i < ra.size(); ++i) n += ra[i] != rb[i];
  }
  return n;
}

}  // namespace

TEST_CASE("mujoco render: Gymnasium's 480 x 480 at round(1 / dt) fps") {
#ifndef RECUR_HAVE_MUJOCO
  recur::test::skip("recur was built without MuJoCo (RECUR_MUJOCO)");
#else
  struct Case {
    const char* id;
    int fps;
  };
  // dt = timestep * frame_skip: 0.01 * 5, 0.002 * 4, 0.002 * 4, 0.01 * 5.
  for (const Case& c :
       {Case{"HalfCheetah-v5", 20}, Case{"HalfCheetah-v4", 20}, Case{"Hopper-v5", 125},
        Case{"Walker2d-v4", 125}, Case{"Ant-v5", 20}, Case{"Ant-P-v4", 20}}) {
    CAPTURE(c.id);
    const auto info = recur::envs::make(c.id)->render_info();
    CHECK(info.width == 480);
    CHECK(info.height == 480);
    CHECK(info.fps == c.fps);
  }
#endif
}

#ifdef RECUR_HAVE_MUJOCO
namespace {

using recur::envs::MujocoEnv;
using recur::envs::MujocoRenderer;
using recur::envs::MujocoView;

const MujocoEnv& mujoco(const recur::envs::Env& env) {
  return dynamic_cast<const MujocoEnv&>(env);
}

}  // namespace
#endif

TEST_CASE("mujoco render: planar robots are seen from the side, Ant obliquely") {
#ifndef RECUR_HAVE_MUJOCO
  recur::test::skip("recur was built without MuJoCo (RECUR_MUJOCO)");
#else
  for (const char* id : {"HalfCheetah-v5", "Hopper-v4", "Walker2d-v5"}) {
    CAPTURE(id);
    auto env = recur::envs::make(id);
    CHECK(MujocoRenderer(mujoco(*env).model(), {}).kind() == MujocoView::Kind::kSide);
  }
  auto ant = recur::envs::make("Ant-v5");
  CHECK(MujocoRenderer(mujoco(*ant).model(), {}).kind() == MujocoView::Kind::kOblique);
  const MujocoView top{.kind = MujocoView::Kind::kTop};
  CHECK(MujocoRenderer(mujoco(*ant).model(), top).kind() == MujocoView::Kind::kTop);
#endif
}

TEST_CASE("mujoco render: the camera follows the torso: its colour at the frame's centre line") {
#ifndef RECUR_HAVE_MUJOCO
  recur::test::skip("recur was built without MuJoCo (RECUR_MUJOCO)");
#else
  for (const char* id : {"HalfCheetah-v5", "Hopper-v5", "Walker2d-v5", "Ant-v5"}) {
    CAPTURE(id);
    auto env = recur::envs::make(id);
    env->reset(3);
    const std::vector<float> action(static_cast<size_t>(env->action_dim()), 0.4f);
    for (int t = 0; t < 10 && !env->needs_reset(); ++t) env->step(action);
    Renderer renderer(*env);
    const Frame& f = renderer.render(*env);
    // The torsos are rgba (0.8, 0.6, 0.4): (204, 153, 102) where lit flat; the camera puts the
    // torso's centre on the middle column, whatever x it has reached.
    int torso_pixels = 0;
    for (int row = 0; row < f.height; ++row) {
      const uint8_t* px = f.at(f.width / 2, row);
      torso_pixels +=
          std::abs(px[0] - 204) < 8 && std::abs(px[1] - 153) < 8 && std::abs(px[2] - 102) < 8;
    }
    CHECK(torso_pixels >= 5);
  }
#endif
}

TEST_CASE("mujoco render: moving along x moves the floor under a tracked robot") {
#ifndef RECUR_HAVE_MUJOCO
  recur::test::skip("recur was built without MuJoCo (RECUR_MUJOCO)");
#else
  auto env = recur::envs::make("HalfCheetah-v5");
  env->reset(7);
  Renderer renderer(*env);
  const Frame before = renderer.render(*env);
  // The same pose 0.5 m further along x (state[1] is qpos[0], the root's x; flag 0: mj_forward).
  std::vector<double> state(static_cast<size_t>(env->state_size()));
  env->get_state(state);
  state[1] += 0.5;
  env->set_state(state);
  const Frame& after = renderer.render(*env);
  // The ground line is 20% up the frame: the robot above it is drawn identically (the camera
  // follows it), the ticks and labels below it have moved.
  const int ground_row = after.height - 1 - after.height / 5;
  CHECK(differing_rows(before, after, 0, ground_row - 4) == 0);
  CHECK(differing_rows(before, after, ground_row + 4, after.height) > 100);
#endif
}

TEST_CASE("mujoco render: frames follow the state and allocate nothing after the first") {
#ifndef RECUR_HAVE_MUJOCO
  recur::test::skip("recur was built without MuJoCo (RECUR_MUJOCO)");
#else
  for (const char* id : {"HalfCheetah-v5", "Ant-v5"}) {
    CAPTURE(id);
    auto env = recur::envs::make(id);
    env->reset(1);
    Renderer renderer(*env);
    const std::vector<uint8_t> first = renderer.render(*env).pixels;
    const std::vector<float> action(static_cast<size_t>(env->action_dim()), 0.8f);
    int changed = 0;
    {
      recur::test::AllocationCounter counter;
      for (int t = 0; t < 10 && !env->needs_reset(); ++t) {
        env->step(action);
        const Frame& f = renderer.render(*env);
        int diff = 0;
        for (size_t i = 0; i < f.pixels.size(); ++i) diff += f.pixels[i] != first[i];
        changed += diff > 100;
      }
      if (recur::test::AllocationCounter::available()) CHECK(counter.count() == 0);
    }
    CHECK(changed >= 9);
  }
#endif
}
