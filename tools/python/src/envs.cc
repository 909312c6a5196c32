// recur._recur.Env and recur._recur.VectorEnv: envs::Env and envs::VectorEnv as the Gymnasium
// wrappers in recur/envs.py drive them. Results stay in the C++ buffers; Python views them
// (BufferView) and copies where Gymnasium's contract asks for fresh arrays.
#include <pybind11/stl.h>

#include <memory>
#include <optional>

#include "bindings.h"
#include "buffers.h"
#include "core/error.h"
#include "core/rng.h"
#include "envs/registry.h"
#include "envs/render/renderer.h"
#include "envs/vector_env.h"

namespace recur::python {
namespace {

py::dict space_dict(const envs::Space& s) {
  py::dict d;
  if (s.is_discrete()) {
    d["kind"] = "discrete";
    d["n"] = s.n();
  } else {
    d["kind"] = "box";
    d["low"] = s.low();
    d["high"] = s.high();
    d["shape"] = py::tuple(py::cast(s.shape()));
  }
  return d;
}

std::vector<py::ssize_t> shape_of(const envs::Space& s, std::optional<int> batch = {}) {
  std::vector<py::ssize_t> shape;
  if (batch) shape.push_back(*batch);
  if (!s.is_discrete())
    for (int d : s.shape()) shape.push_back(d);
  return shape;
}

py::dict spec_dict(const std::string& id) {
  const envs::EnvSpec& spec = envs::registry().at(id);
  py::dict d;
  d["id"] = spec.id;
  d["family"] = spec.family;
  d["max_episode_steps"] = spec.max_episode_steps;
  d["reward_threshold"] = spec.reward_threshold ? py::cast(*spec.reward_threshold) : py::none();
  d["summary"] = spec.summary;
  d["available"] = spec.available;  // false: this build lacks what it needs (MuJoCo)
  return d;
}

// One env with the renderer Gymnasium's render_mode="rgb_array" needs (made on first render).
struct PyEnv {
  std::unique_ptr<envs::Env> env;
  std::unique_ptr<envs::render::Renderer> renderer;
};

}  // namespace

Options to_options(const std::map<std::string, std::string>& values, const std::string& source) {
  Options o;
  o.values = values;
  o.source = source;
  return o;
}

void bind_envs(py::module_& m) {
  m.def(
      "env_ids", [] { return envs::registry().ids(); }, "Every registered env id.");
  m.def(
      "derive_seed", [](uint64_t seed, uint64_t index) { return derive_seed(seed, index); },
      py::arg("seed"), py::arg("index"),
      "The seed VectorEnv.reset(seed) gives env `index` (recur's SplitMix64 derivation).");
  m.def("env_spec", &spec_dict, py::arg("env_id"),
        "The registration of an env id: time limit, reward threshold, family, summary, and "
        "whether this build can make it (available).");

  py::class_<PyEnv>(m, "Env", "One recur env (envs::Env); recur.make wraps it for Gymnasium.")
      .def(py::init([](const std::string& id, const std::map<std::string, std::string>& options) {
             return PyEnv{envs::make(id, to_options(options, "recur.make options")), nullptr};
           }),
           py::arg("env_id"), py::arg("options") = std::map<std::string, std::string>{})
      .def_property_readonly("id", [](const PyEnv& e) { return e.env->id(); })
      .def_property_readonly("observation_space",
                             [](const PyEnv& e) { return space_dict(e.env->observation_space()); })
      .def_property_readonly("action_space",
                             [](const PyEnv& e) { return space_dict(e.env->action_space()); })
      .def_property_readonly("max_episode_steps",
                             [](const PyEnv& e) { return e.env->max_episode_steps(); })
      .def_property_readonly("render_fps", [](const PyEnv& e) { return e.env->render_info().fps; })
      .def_property_readonly("elapsed_steps", [](const PyEnv& e) { return e.env->elapsed_steps(); })
      .def_property_readonly("episode_return",
                             [](const PyEnv& e) { return e.env->episode_return(); })
      .def(
          "reset",
          [](PyEnv& e, std::optional<uint64_t> seed) {
            if (seed)
              e.env->reset(*seed);
            else
              e.env->reset();
          },
          py::arg("seed") = py::none(), "Starts an episode; the observation is in observation().")
      .def(
          "step",
          [](PyEnv& e, const py::handle& action) {
            const Input<float> a(action, "action");
            const envs::StepResult r = e.env->step(a.span());
            return py::make_tuple(r.reward, r.terminated, r.truncated);
          },
          py::arg("action"),
          "Steps with a float32 action; returns (reward, terminated, truncated).")
      .def(
          "observation",
          [](py::object self) {
            const PyEnv& e = self.cast<const PyEnv&>();
            return view_of(self, e.env->observation(), shape_of(e.env->observation_space()));
          },
          "The current observation, viewed (valid until the next reset or step).")
      .def(
          "render",
          [](py::object self) {
            PyEnv& e = self.cast<PyEnv&>();
            if (!e.renderer) e.renderer = std::make_unique<envs::render::Renderer>(*e.env);
            const auto& f = e.renderer->render(*e.env);
            return view_of(self, std::span<const uint8_t>(f.pixels), {f.height, f.width, 3});
          },
          "The current state as an RGB frame (height, width, 3), viewed until the next render.")
      .def_property_readonly("state_size", [](const PyEnv& e) { return e.env->state_size(); })
      .def("get_state",
           [](const PyEnv& e) {
             std::vector<double> s(static_cast<size_t>(e.env->state_size()));
             e.env->get_state(s);
             return s;
           })
      .def(
          "set_state", [](PyEnv& e, const std::vector<double>& s) { e.env->set_state(s); },
          py::arg("state"));

  py::class_<envs::VectorEnv>(m, "VectorEnv",
                              "envs::VectorEnv (SAME_STEP autoreset); recur.make_vec wraps it.")
      .def(py::init([](const std::string& id, int num_envs,
                       const std::map<std::string, std::string>& options, int num_threads) {
             return std::make_unique<envs::VectorEnv>(
                 id, num_envs, to_options(options, "recur.make_vec options"), num_threads);
           }),
           py::arg("env_id"), py::arg("num_envs"),
           py::arg("options") = std::map<std::string, std::string>{}, py::arg("num_threads") = 1)
      .def_property_readonly("id", &envs::VectorEnv::id)
      .def_property_readonly("num_envs", &envs::VectorEnv::num_envs)
      .def_property_readonly("num_threads", &envs::VectorEnv::num_threads)
      .def_property_readonly("obs_dim", &envs::VectorEnv::obs_dim)
      .def_property_readonly("action_dim", &envs::VectorEnv::action_dim)
      .def_property_readonly(
          "observation_space",
          [](const envs::VectorEnv& v) { return space_dict(v.single_observation_space()); })
      .def_property_readonly(
          "action_space",
          [](const envs::VectorEnv& v) { return space_dict(v.single_action_space()); })
      .def_property_readonly("max_episode_steps",
                             [](const envs::VectorEnv& v) { return v.env(0).max_episode_steps(); })
      .def(
          "reset", [](envs::VectorEnv& v, uint64_t seed) { v.reset(seed); }, py::arg("seed"),
          "Env i restarts with derive_seed(seed, i), as in recur's training and evaluation.")
      .def(
          "reset_each",
          [](envs::VectorEnv& v, const std::vector<std::optional<uint64_t>>& seeds) {
            RECUR_CHECK_ARG(seeds.size() == static_cast<size_t>(v.num_envs()),
                            "reset: {} seeds for {} envs; give one per env (or one int)",
                            seeds.size(), v.num_envs());
            for (int i = 0; i < v.num_envs(); ++i) {
              const auto& s = seeds[static_cast<size_t>(i)];
              if (s)
                v.env(i).reset(*s);
              else
                v.env(i).reset();
            }
            // Restoring the envs' own snapshots copies their first observations into the batch
            // buffer and marks every slot as an episode start (as reset(seed) does).
            auto snapshot = v.snapshot();
            std::fill(snapshot.episode_start.begin(), snapshot.episode_start.end(), 1);
            v.restore(snapshot);
          },
          py::arg("seeds"), "Env i restarts with seeds[i]; None continues that env's RNG.")
      .def(
          "step",
          [](envs::VectorEnv& v, const py::handle& actions) {
            const Input<float> a(actions, "actions");
            if (v.num_threads() > 1) {
              py::gil_scoped_release unlocked;
              v.step(a.span());
            } else {
              v.step(a.span());
            }
          },
          py::arg("actions"), "Steps every env with float32 actions (num_envs, action_dim).")
      .def(
          "view",
          [](py::object self, const std::string& name) {
            const auto& v = self.cast<const envs::VectorEnv&>();
            const int n = v.num_envs();
            const auto obs_shape = shape_of(v.single_observation_space(), n);
            if (name == "obs") return view_of(self, v.obs(), obs_shape);
            if (name == "final_obs") return view_of(self, v.final_obs(), obs_shape);
            if (name == "rewards") return view_of(self, v.rewards(), {n});
            if (name == "terminated") return view_of(self, v.terminated(), {n});
            if (name == "truncated") return view_of(self, v.truncated(), {n});
            if (name == "episode_start") return view_of(self, v.episode_start(), {n});
            if (name == "final_return") return view_of(self, v.final_return(), {n});
            if (name == "final_length") return view_of(self, v.final_length(), {n});
            throw std::invalid_argument("VectorEnv.view: no buffer named '" + name + "'");
          },
          py::arg("name"),
          "A read-only view of one batch buffer: obs, rewards, terminated, truncated, "
          "episode_start, final_obs, final_return, final_length.");
}

}  // namespace recur::python
