// recur's MuJoCo envs (envs/mujoco): the shared model cache, errors for bad model files and
// actions, MuJoCo's handlers, exact resume and the -P/-V observations. Each case skips where recur
// was built without MuJoCo (RECUR_HAVE_MUJOCO, tests/CMakeLists.txt). Gymnasium parity is
// tools/python/tests/test_mujoco_parity.py.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/error.h"
#include "envs/mujoco/ant.h"
#include "envs/mujoco/model_cache.h"
#include "envs/mujoco/planar_locomotion.h"
#include "envs/registry.h"
#include "tests/support/skip.h"
#include "tests/support/temp_dir.h"

namespace {

namespace fs = std::filesystem;
using recur::envs::Env;

[[maybe_unused]] const char* const kFullIds[] = {"HalfCheetah-v4", "HalfCheetah-v5", "Hopper-v4",
                                                 "Hopper-v5",      "Walker2d-v4",    "Walker2d-v5",
                                                 "Ant-v4",         "Ant-v5"};

// Steps with a fixed pseudo-random action sequence (some actions outside [-1, 1]).
[[maybe_unused]] std::vector<float> action_at(int step, int dim) {
  std::vector<float> a(static_cast<size_t>(dim));
  for (int i = 0; i < dim; ++i)
    a[static_cast<size_t>(i)] = static_cast<float>(1.3 * std::sin(0.7 * step + 1.9 * i));
  return a;
}

[[maybe_unused]] std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("mujoco: every id is registered, with Gymnasium's limits") {
  const auto& reg = recur::envs::registry();
  for (const std::string name : {"HalfCheetah", "Hopper", "Walker2d", "Ant"}) {
    for (const std::string infix : {"", "-P", "-V"}) {
      for (const std::string v : {"-v4", "-v5"}) {
        const std::string id = name + infix + v;
        CAPTURE(id);
        REQUIRE(reg.find(id) != nullptr);
        CHECK(reg.at(id).max_episode_steps == 1000);
        CHECK(reg.at(id).family == "mujoco");
      }
    }
  }
  CHECK(*reg.at("HalfCheetah-v5").reward_threshold == 4800.0);
  CHECK(*reg.at("Hopper-v4").reward_threshold == 3800.0);
  CHECK_FALSE(reg.at("Walker2d-v5").reward_threshold.has_value());
  CHECK(*reg.at("Ant-v5").reward_threshold == 6000.0);
#ifndef RECUR_HAVE_MUJOCO
  CHECK_FALSE(reg.at("Ant-v5").available);
  const std::string message = error_of([] { recur::envs::make("Ant-v5"); });
  CHECK(message.find("tools/install-deps.sh") != std::string::npos);
  CHECK(message.find("-DRECUR_MUJOCO=ON") != std::string::npos);
#else
  CHECK(reg.at("Ant-v5").available);
#endif
}

TEST_CASE("mujoco: envs of one model file share one mjModel") {
#ifndef RECUR_HAVE_MUJOCO
  recur::test::skip("recur was built without MuJoCo (RECUR_MUJOCO)");
#else
  auto a = recur::envs::make("Ant-v5");
  auto b = recur::envs::make("Ant-P-v4");
  auto c = recur::envs::make("HalfCheetah-v5");
  const auto& ant_a = dynamic_cast<const recur::envs::MujocoEnv&>(*a);
  const auto& ant_b = dynamic_cast<const recur::envs::MujocoEnv&>(*b);
  const auto& cheetah = dynamic_cast<const recur::envs::MujocoEnv&>(*c);
  CHECK(ant_a.model() == ant_b.model());
  CHECK(ant_a.model() != cheetah.model());
  CHECK(ant_a.model_path() == ant_b.model_path());
  CHECK(recur::envs::cached_mujoco_models() >= 2);
  CHECK(recur::envs::mujoco_version() == "3.3.7");
  // Walker2d-v5 reads its own file (both feet with friction 1.9).
  auto w4 = recur::envs::make("Walker2d-v4");
  auto w5 = recur::envs::make("Walker2d-v5");
  CHECK(dynamic_cast<const recur::envs::MujocoEnv&>(*w4).model_path().ends_with("/walker2d.xml"));
  CHECK(
      dynamic_cast<const recur::envs::MujocoEnv&>(*w5).model_path().ends_with("/walker2d_v5.xml"));
#endif
}

TEST_CASE("mujoco: bad model files are errors naming the file") {
#ifndef RECUR_HAVE_MUJOCO
  recur::test::skip("recur was built without MuJoCo (RECUR_MUJOCO)");
#else
  recur::test::TempDir dir("mujoco");
  recur::envs::AntConfig config;
  // Missing: every path searched, and how to install the files.
  config.mujoco.xml_file = (dir.path / "nothing.xml").string();
  std::string message = error_of([&] { recur::envs::Ant env(config); });
  CHECK(message.find("nothing.xml") != std::string::npos);
  CHECK(message.find("pip install") != std::string::npos);
  // A bare name is looked up in RECUR_GYMNASIUM_ASSETS and the installed assets.
  config.mujoco.xml_file = "no_such_model.xml";
  message = error_of([&] { recur::envs::Ant env(config); });
  CHECK(message.find("gymnasium/envs/mujoco/assets/no_such_model.xml") != std::string::npos);
  // Corrupt XML: MuJoCo's parser message, with the file.
  const fs::path corrupt = dir.path / "corrupt.xml";
  std::ofstream(corrupt) << "<mujoco><worldbody><body></mujoco";
  config.mujoco.xml_file = corrupt.string();
  message = error_of([&] { recur::envs::Ant env(config); });
  CHECK(message.find("corrupt.xml") != std::string::npos);
  CHECK(message.find("cannot load") != std::string::npos);
  // A valid model of other sizes: the sizes, both ways.
  const fs::path cheetah =
      dynamic_cast<const recur::envs::MujocoEnv&>(*recur::envs::make("HalfCheetah-v5"))
          .model_path();
  config.mujoco.xml_file = cheetah.string();
  message = error_of([&] { recur::envs::Ant env(config); });
  CHECK(message.find("half_cheetah.xml") != std::string::npos);
  CHECK(message.find("nq=9 nv=9 nu=6") != std::string::npos);
  CHECK(message.find("nq=15 nv=14 nu=8") != std::string::npos);
  // Bad option values.
  CHECK_THROWS_AS(recur::envs::make("Ant-v5", recur::Options{}.set("frame_skip", "0")),
                  recur::Error);
  CHECK_THROWS_AS(recur::envs::make("Hopper-v5", recur::Options{}.set("reset_noise_scale", "-1")),
                  recur::Error);
  CHECK_THROWS_AS(recur::envs::make("HalfCheetah-v5", recur::Options{}.set("healthy_reward", "1")),
                  recur::Error);
#endif
}

TEST_CASE("mujoco: the xml_file option picks the model, and bad files are errors") {
#ifndef RECUR_HAVE_MUJOCO
  recur::test::skip("recur was built without MuJoCo (RECUR_MUJOCO)");
#else
  recur::test::TempDir dir("mujoco");
  const std::string ant_path =
      dynamic_cast<const recur::envs::MujocoEnv&>(*recur::envs::make("Ant-v5")).model_path();
  // A copy of Gymnasium's file elsewhere: the env reads that copy.
  const fs::path copy = dir.path / "my_ant.xml";
  fs::copy_file(ant_path, copy);
  auto env = recur::envs::make("Ant-v4", recur::Options{}.set("xml_file", copy.string()));
  CHECK(dynamic_cast<const recur::envs::MujocoEnv&>(*env).model_path() == copy.string());
  // Missing: the path, every place searched, and how to install Gymnasium's files.
  const fs::path missing = dir.path / "nothing.xml";
  std::string message = error_of(
      [&] { recur::envs::make("Hopper-v5", recur::Options{}.set("xml_file", missing.string())); });
  CHECK(message.find(missing.string()) != std::string::npos);
  CHECK(message.find("pip install") != std::string::npos);
  // Corrupt: MuJoCo's parser message with the file.
  const fs::path corrupt = dir.path / "corrupt.xml";
  std::ofstream(corrupt) << "<mujoco><worldbody><body></mujoco";
  message = error_of([&] {
    recur::envs::make("Walker2d-v4", recur::Options{}.set("xml_file", corrupt.string()));
  });
  CHECK(message.find("corrupt.xml") != std::string::npos);
  CHECK(message.find("cannot load") != std::string::npos);
  // Empty text is an error naming the option.
  message = error_of([] { recur::envs::make("Ant-v5", recur::Options{}.set("xml_file", "")); });
  CHECK(message.find("xml_file") != std::string::npos);
#endif
}

TEST_CASE("mujoco: a NaN action is rejected and MuJoCo writes no MUJOCO_LOG.TXT") {
#ifndef RECUR_HAVE_MUJOCO
  recur::test::skip("recur was built without MuJoCo (RECUR_MUJOCO)");
#else
  recur::test::TempDir dir("mujoco");
  const fs::path before = fs::current_path();
  fs::current_path(dir.path);
  {
    auto env = recur::envs::make("Hopper-v5");
    env->reset(1);
    std::vector<float> a(3, 0.0f);
    a[1] = std::numeric_limits<float>::quiet_NaN();
    CHECK_THROWS_AS(env->step(a), std::invalid_argument);
    // A state with a huge velocity: MuJoCo warns (mjWARN_BADQVEL) and resets its data; the
    // warning goes to recur's log, not to a file. Integration state: time, qpos (6), qvel (6), ...
    std::vector<double> state(static_cast<size_t>(env->state_size()));
    env->get_state(state);
    state[1 + 6] = 1e30;
    env->set_state(state);
    env->step(std::vector<float>(3, 0.0f));
  }
  const bool log_written = fs::exists(dir.path / "MUJOCO_LOG.TXT");
  fs::current_path(before);
  CHECK_FALSE(log_written);
#endif
}

TEST_CASE("mujoco: restore() continues an episode bit-exactly") {
#ifndef RECUR_HAVE_MUJOCO
  recur::test::skip("recur was built without MuJoCo (RECUR_MUJOCO)");
#else
  for (const char* id : kFullIds) {
    CAPTURE(id);
    // Without termination, so that every env runs all 40 steps (HalfCheetah takes the option
    // only as an unknown one: give it nothing).
    const recur::Options options = std::string(id).starts_with("Half")
                                       ? recur::Options{}
                                       : recur::Options{}.set("terminate_when_unhealthy", "0");
    auto env = recur::envs::make(id, options);
    env->reset(7);
    const Env::Snapshot at_reset = env->snapshot();
    for (int t = 0; t < 20; ++t) env->step(action_at(t, env->action_dim()));
    const Env::Snapshot mid = env->snapshot();
    std::vector<std::vector<float> > obs;
    std::vector<double> rewards;
    for (int t = 20; t < 40; ++t) {
      const auto r = env->step(action_at(t, env->action_dim()));
      obs.emplace_back(r.obs.begin(), r.obs.end());
      rewards.push_back(r.reward);
    }
    // A fresh env restored from the snapshot repeats the same 20 steps exactly.
    auto other = recur::envs::make(id, options);
    other->restore(mid);
    for (int t = 20; t < 40; ++t) {
      const auto r = other->step(action_at(t, other->action_dim()));
      CHECK(std::vector<float>(r.obs.begin(), r.obs.end()) == obs[static_cast<size_t>(t - 20)]);
      CHECK(r.reward == rewards[static_cast<size_t>(t - 20)]);
    }
    // And from the reset state: the same first observation.
    auto again = recur::envs::make(id, options);
    again->restore(at_reset);
    env->reset(7);
    CHECK(std::vector<float>(again->observation().begin(), again->observation().end()) ==
          std::vector<float>(env->observation().begin(), env->observation().end()));
  }
#endif
}

TEST_CASE("mujoco: -P and -V observations are slices of the full one") {
#ifndef RECUR_HAVE_MUJOCO
  recur::test::skip("recur was built without MuJoCo (RECUR_MUJOCO)");
#else
  struct Split {
    const char* name;
    int positions, velocities;
  };
  for (const Split s : {Split{"HalfCheetah", 8, 9}, Split{"Hopper", 5, 6}, Split{"Walker2d", 8, 9},
                        Split{"Ant", 13, 14}}) {
    for (const std::string v : {"-v4", "-v5"}) {
      const std::string name = s.name;
      CAPTURE(name + v);
      auto full = recur::envs::make(name + v);
      auto p = recur::envs::make(name + "-P" + v);
      auto vel = recur::envs::make(name + "-V" + v);
      CHECK(p->obs_dim() == s.positions);
      CHECK(vel->obs_dim() == s.velocities);
      full->reset(3);
      for (int t = 0; t < 5; ++t) full->step(action_at(t, full->action_dim()));
      std::vector<double> state(static_cast<size_t>(full->state_size()));
      full->get_state(state);
      p->reset(0);
      vel->reset(0);
      p->set_state(state);
      vel->set_state(state);
      const auto o = full->observation();
      for (int i = 0; i < s.positions; ++i) CHECK(p->observation()[i] == o[i]);
      for (int i = 0; i < s.velocities; ++i) CHECK(vel->observation()[i] == o[s.positions + i]);
      // Same reward and termination as the full env.
      const auto a = action_at(9, full->action_dim());
      const auto rf = full->step(a);
      const auto rp = p->step(a);
      CHECK(rf.reward == rp.reward);
      CHECK(rf.terminated == rp.terminated);
    }
  }
#endif
}
