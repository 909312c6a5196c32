// Space JSON as Minari writes it (json.dumps of minari.serialization.serialize_space): the golden
// strings were printed by Python (Gymnasium 1.4, Minari 0.5) and must match byte for byte.
#include "agent/record/space_json.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "agent/record/minari_writer.h"
#include "envs/registry.h"

using namespace recur;
using namespace recur::agent::record;

TEST_CASE("space json: Python float repr") {
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(python_float_repr(1.0) == "1.0");
  CHECK(python_float_repr(0.1) == "0.1");
  CHECK(python_float_repr(100.0) == "100.0");
  CHECK(python_float_repr(475.0) == "475.0");
  CHECK(python_float_repr(-110.0) == "-110.0");
  CHECK(python_float_repr(1e16) == "1e+16");
  CHECK(python_float_repr(1e15) == "1000000000000000.0");
  CHECK(python_float_repr(123456789012345678.0) == "1.2345678901234568e+17");
  CHECK(python_float_repr(1e-4) == "0.0001");
  CHECK(python_float_repr(1e-5) == "1e-05");
  CHECK(python_float_repr(1.5e-7) == "1.5e-07");
  CHECK(python_float_repr(2.5e-5) == "2.5e-05");
  CHECK(python_float_repr(0.00012) == "0.00012");
  CHECK(python_float_repr(12345.678) == "12345.678");
  CHECK(python_float_repr(-0.0) == "-0.0");
  CHECK(python_float_repr(0.0) == "0.0");
  CHECK(python_float_repr(5e-324) == "5e-324");
  CHECK(python_float_repr(1.7976931348623157e308) == "1.7976931348623157e+308");
  CHECK(python_float_repr(static_cast<double>(4.8f)) == "4.800000190734863");
  CHECK(python_float_repr(inf) == "Infinity");
  CHECK(python_float_repr(-inf) == "-Infinity");
  CHECK(python_float_repr(std::nan("")) == "NaN");
}

TEST_CASE("space json: strings escaped as json.dumps (ensure_ascii)") {
  CHECK(python_json_string("abc") == R"("abc")");
  CHECK(python_json_string("a\"b\\c\n\t\x01\x7f") == R"("a\"b\\c\n\t\u0001\u007f")");
  CHECK(python_json_string("\xc3\xa9") == R"("\u00e9")");                // é
  CHECK(python_json_string("\xf0\x9f\x98\x80") == R"("\ud83d\ude00")");  // U+1F600
  CHECK(python_json_string("\xff") == R"("\ufffd")");
}

TEST_CASE("space json: the classic-control spaces, byte for byte") {
  auto obs = [](const char* id) {
    return space_to_minari_json(envs::make(id)->observation_space());
  };
  auto act = [](const char* id) { return space_to_minari_json(envs::make(id)->action_space()); };
  CHECK(
      obs("CartPole-v1") ==
      R"({"type": "Box", "dtype": "float32", "shape": [4], "low": [-4.800000190734863, -Infinity, -0.41887903213500977, -Infinity], "high": [4.800000190734863, Infinity, 0.41887903213500977, Infinity]})");
  CHECK(act("CartPole-v1") == R"({"type": "Discrete", "dtype": "int64", "start": 0, "n": 2})");
  CHECK(
      obs("MountainCar-v0") ==
      R"({"type": "Box", "dtype": "float32", "shape": [2], "low": [-1.2000000476837158, -0.07000000029802322], "high": [0.6000000238418579, 0.07000000029802322]})");
  CHECK(act("MountainCar-v0") == R"({"type": "Discrete", "dtype": "int64", "start": 0, "n": 3})");
  CHECK(
      obs("Acrobot-v1") ==
      R"({"type": "Box", "dtype": "float32", "shape": [6], "low": [-1.0, -1.0, -1.0, -1.0, -12.566370964050293, -28.274333953857422], "high": [1.0, 1.0, 1.0, 1.0, 12.566370964050293, 28.274333953857422]})");
  CHECK(
      obs("Pendulum-v1") ==
      R"({"type": "Box", "dtype": "float32", "shape": [3], "low": [-1.0, -1.0, -8.0], "high": [1.0, 1.0, 8.0]})");
  CHECK(act("Pendulum-v1") ==
        R"({"type": "Box", "dtype": "float32", "shape": [1], "low": [-2.0], "high": [2.0]})");
  CHECK(act("MountainCarContinuous-v0") ==
        R"({"type": "Box", "dtype": "float32", "shape": [1], "low": [-1.0], "high": [1.0]})");
  // A 2-D Box nests like numpy's tolist().
  CHECK(
      space_to_minari_json(envs::Space::box(0.0f, 1.0f, {2, 2})) ==
      R"({"type": "Box", "dtype": "float32", "shape": [2, 2], "low": [[0.0, 0.0], [0.0, 0.0]], "high": [[1.0, 1.0], [1.0, 1.0]]})");
}

TEST_CASE("space json: env_spec strings as Gymnasium's EnvSpec.to_json()") {
  DatasetInfo info;
  info.env_id = "CartPole-v1";
  info.env_entry_point = gymnasium_entry_point("CartPole-v1");
  info.max_episode_steps = 500;
  info.reward_threshold = 475.0;
  CHECK(
      minari_env_spec_json(info) ==
      R"({"id": "CartPole-v1", "entry_point": "gymnasium.envs.classic_control.cartpole:CartPoleEnv", "reward_threshold": 475.0, "nondeterministic": false, "max_episode_steps": 500, "order_enforce": true, "disable_env_checker": false, "kwargs": {}, "additional_wrappers": [], "vector_entry_point": "gymnasium.envs.classic_control.cartpole:CartPoleVectorEnv"})");
  info.env_id = "Pendulum-v1";
  info.env_entry_point = gymnasium_entry_point("Pendulum-v1");
  info.max_episode_steps = 200;
  info.reward_threshold.reset();
  CHECK(
      minari_env_spec_json(info) ==
      R"({"id": "Pendulum-v1", "entry_point": "gymnasium.envs.classic_control.pendulum:PendulumEnv", "reward_threshold": null, "nondeterministic": false, "max_episode_steps": 200, "order_enforce": true, "disable_env_checker": false, "kwargs": {}, "additional_wrappers": [], "vector_entry_point": null})");
  info.env_id = "LunarLander-v3";
  info.env_entry_point = gymnasium_entry_point("LunarLander-v3");
  info.max_episode_steps = 1000;
  info.reward_threshold = 200;
  CHECK(
      minari_env_spec_json(info) ==
      R"({"id": "LunarLander-v3", "entry_point": "gymnasium.envs.box2d.lunar_lander:LunarLander", "reward_threshold": 200, "nondeterministic": false, "max_episode_steps": 1000, "order_enforce": true, "disable_env_checker": false, "kwargs": {}, "additional_wrappers": [], "vector_entry_point": null})");
  // recur's own envs have no Gymnasium entry point: no Gymnasium env_spec (training.cc gives
  // them recur's own, recur/<id>, through recur_env_spec_json).
  CHECK(gymnasium_entry_point("CartPoleNoVel-v1").empty());
  info.env_id = "CartPoleNoVel-v1";
  info.env_entry_point = "";
  CHECK(minari_env_spec_json(info).empty());
  // Every registered recur env that Gymnasium also has gets its entry point.
  for (const auto& spec : envs::registry().specs())
    if (spec.family == "classic_control" && spec.id.find("NoVel") == std::string::npos)
      CHECK_MESSAGE(!gymnasium_entry_point(spec.id).empty(), spec.id);
}
