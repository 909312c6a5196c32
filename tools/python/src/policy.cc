// recur._recur.Policy and recur._recur.evaluate: a trained checkpoint acting the way `recur eval`
// acts. Policy keeps the recurrent state outside (the caller passes it in and gets the new one
// back); inside, one PolicyActor per batch size is loaded with the checkpoint and its state is
// set from the caller's before each act, so act() computes exactly what evaluate_policy's actor
// computes for the same observations, episode starts and random stream.
#include <pybind11/stl.h>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>

#include "agent/evaluator.h"
#include "agent/policy_target.h"
#include "agent/training.h"
#include "bindings.h"
#include "buffers.h"
#include "core/error.h"
#include "core/rng.h"
#include "gym_env.h"
#include "policy/convert/onnx.h"
#include "policy/device_choice.h"
#include "policy/policy_actor.h"
#include "policy/policy_checkpoint.h"

namespace recur::python {
namespace {

// A run directory or a checkpoint file, as `recur eval TARGET` loads it (agent/policy_target.h).
using Target = agent::PolicyTarget;
Target load_target(const std::string& target) {
  return agent::load_policy_target(target, "", /*foreign_env_ok=*/true);
}

// The same with the env plugins of its env loaded, as `recur eval` loads them.
Target load_target(const std::string& target, const std::vector<std::string>& plugins) {
  Target t = load_target(target);
  load_target_plugins(t, plugins);
  return t;
}

policy::Device resolve(const std::string& device) {
  return policy::resolve_device("device", device, policy::query_devices());
}

class PyPolicy {
 public:
  PyPolicy(const std::string& checkpoint, const std::string& device, std::optional<uint64_t> seed,
           const std::vector<std::string>& plugins)
      : target_(load_target(checkpoint, plugins)),
        // The stream `recur eval --seed S` samples from: Rng(derive_seed(S, 77)).
        rng_(derive_seed(seed ? *seed : std::random_device{}(), 77)) {
    placement_.device = resolve(device);
    actor(1);  // fails here, not at the first act, when the checkpoint cannot be placed
  }

  const Target& target() const { return target_; }
  const policy::PolicySpec& spec() const { return target_.checkpoint.spec; }
  policy::Device device() const { return placement_.device; }
  int action_width() const { return spec().action_width(); }

  // n slots: obs (n, obs_dim), state (n, state_size), episode_start (n) in; actions
  // (n, action_width), new_state (n, state_size), log_probs (n), values (n) out.
  void act(int n, const py::handle& obs, const py::handle& state, const py::handle& starts,
           bool deterministic, const py::handle& actions, const py::handle& new_state,
           const py::handle& log_probs, const py::handle& values) {
    RECUR_CHECK_ARG(n >= 1, "act: a batch of {} observations; give at least one", n);
    const Input<float> o(obs, "obs");
    const Input<float> s(state, "state");
    const Input<uint8_t> e(starts, "episode_start");
    const Output<float> a(actions, "actions"), ns(new_state, "new_state"),
        lp(log_probs, "log_probs"), v(values, "values");
    RECUR_CHECK_ARG(e.size() == static_cast<size_t>(n),
                    "act: episode_start has {} entries for {} observations", e.size(), n);
    policy::PolicyActor& pa = actor(n);
    py::gil_scoped_release unlocked;
    pa.set_states(s.span());
    pa.act(o.span(), e.span(), rng_, deterministic, a.span(), lp.span(), v.span());
    pa.get_states(ns.span());
  }

  // The whole actor as an ONNX model, as `recur convert export --to onnx` writes it; returns
  // whether the mean of a continuous policy is clamped to a known action box.
  bool export_onnx(const std::string& path) const {
    policy::convert::require_onnx_export();
    const policy::convert::OnnxExportOptions options = agent::onnx_export_options(target_);
    py::gil_scoped_release unlocked;
    policy::convert::save_policy_onnx(path, spec(), target_.checkpoint.tensors, options);
    return !options.action_low.empty();
  }

 private:
  policy::PolicyActor& actor(int n) {
    auto& slot = actors_[n];
    if (!slot) {
      slot = std::make_unique<policy::PolicyActor>(spec(), n, placement_);
      slot->load(target_.checkpoint.tensors);
    }
    return *slot;
  }

  Target target_;
  policy::Placement placement_;
  Rng rng_;
  std::map<int, std::unique_ptr<policy::PolicyActor>> actors_;  // by batch size
};

// What recur.evaluate returns, for a registered env and a Gymnasium env alike.
py::dict eval_dict(const std::filesystem::path& checkpoint, const std::string& env_id,
                   const agent::EvalResult& r) {
  py::dict d;
  d["checkpoint"] = checkpoint.string();
  d["env_id"] = env_id;
  d["returns"] = r.returns;
  d["lengths"] = r.lengths;
  d["return_mean"] = r.mean_return();
  d["return_std"] = r.std_return();
  d["length_mean"] = r.mean_length();
  return d;
}

// recur.evaluate on a registered env: agent::evaluate on the target loaded as Policy loads it
// (its plugins with the Python spelling of the way out).
py::dict evaluate(const std::string& checkpoint, int episodes, uint64_t seed, int num_envs,
                  bool deterministic, const std::optional<std::string>& env_id,
                  const std::string& device, const std::vector<std::string>& plugins, int threads,
                  const std::map<std::string, std::string>& env_options) {
  Target t = agent::load_policy_target(checkpoint, env_id.value_or(""), /*foreign_env_ok=*/true);
  load_target_plugins(t, plugins);
  RECUR_CHECK(!t.env_id.empty(), "{} does not record its env; pass env_id", t.path.string());
  RECUR_CHECK(t.env_source.empty() || env_id,
              "{} was trained on an env from {} ({}); pass that env: recur.evaluate(run, env=...)",
              t.path.string(), t.env_source, t.env_id);
  agent::EvaluateOptions o;
  o.episodes = episodes;
  o.num_envs = num_envs;
  o.seed = seed;
  o.deterministic = deterministic;
  o.device = resolve(device);
  RECUR_CHECK(threads >= 1, "evaluate: threads={} is not a thread count; give 1 or more", threads);
  o.threads = threads;
  o.env_options = to_options(env_options, "recur.evaluate env_options");
  agent::EvaluateResult r;
  {
    py::gil_scoped_release unlocked;
    r = agent::evaluate(t, o);
  }
  return eval_dict(r.checkpoint, r.env_id, r.eval);
}

// evaluate() on Gymnasium envs: `batch` is a recur.gym_batch.GymBatch; agent::evaluate with it as
// the envs from outside the registry.
py::dict evaluate_batch(const std::string& checkpoint, py::object batch, int episodes,
                        uint64_t seed, bool deterministic, const std::string& device) {
  auto env = std::make_unique<PyBatchEnv>(std::move(batch));
  agent::EvaluateOptions o;
  o.episodes = episodes;
  o.seed = seed;
  o.deterministic = deterministic;
  o.device = resolve(device);
  o.make_env = [&](int) -> std::unique_ptr<envs::BatchEnv> {
    RECUR_CHECK(env != nullptr, "evaluate: the envs given are used once");
    return std::move(env);
  };
  agent::EvaluateResult r;
  {
    py::gil_scoped_release unlocked;
    r = agent::evaluate(checkpoint, o);
  }
  return eval_dict(r.checkpoint, r.env_id, r.eval);
}

double film(const std::string& checkpoint, py::object batch, const std::string& path, uint64_t seed,
            bool deterministic, int fps) {
  const Target t = load_target(checkpoint);
  PyBatchEnv env(std::move(batch));
  py::gil_scoped_release unlocked;
  return film_episode(env, t.checkpoint.spec, t.checkpoint.tensors, seed, deterministic, path, fps);
}

}  // namespace

void bind_policy(py::module_& m) {
  py::class_<PyPolicy>(m, "Policy",
                       "A checkpoint's policy acting on batches (policy::PolicyActor).")
      .def(py::init<const std::string&, const std::string&, std::optional<uint64_t>,
                    const std::vector<std::string>&>(),
           py::arg("checkpoint"), py::arg("device") = "cpu", py::arg("seed") = py::none(),
           py::arg("plugins") = std::vector<std::string>{})
      .def_property_readonly("path", [](const PyPolicy& p) { return p.target().path.string(); })
      .def_property_readonly("env_id", [](const PyPolicy& p) { return p.target().env_id; })
      .def_property_readonly("env_options",
                             [](const PyPolicy& p) { return p.target().env_options.values; })
      .def_property_readonly("metadata",
                             [](const PyPolicy& p) { return p.target().checkpoint.metadata; })
      .def_property_readonly("spec", [](const PyPolicy& p) { return p.spec().to_metadata(); })
      .def_property_readonly("device",
                             [](const PyPolicy& p) { return std::string(to_string(p.device())); })
      .def_property_readonly("obs_dim", [](const PyPolicy& p) { return p.spec().obs_dim; })
      .def_property_readonly(
          "discrete",
          [](const PyPolicy& p) { return p.spec().action_kind == policy::ActionKind::kDiscrete; })
      .def_property_readonly("action_dim", [](const PyPolicy& p) { return p.spec().action_dim; })
      .def_property_readonly("action_width", &PyPolicy::action_width)
      .def_property_readonly("state_size", [](const PyPolicy& p) { return p.spec().state_size(); })
      .def("act", &PyPolicy::act, py::arg("n"), py::arg("obs"), py::arg("state"),
           py::arg("episode_start"), py::arg("deterministic"), py::arg("actions"),
           py::arg("new_state"), py::arg("log_probs"), py::arg("values"))
      .def("export_onnx", &PyPolicy::export_onnx, py::arg("path"));
  m.attr("onnx_export_available") = policy::convert::onnx_export_available();

  m.def("evaluate", &evaluate, py::arg("checkpoint"), py::arg("episodes") = 10,
        py::arg("seed") = 12345, py::arg("num_envs") = 4, py::arg("deterministic") = false,
        py::arg("env_id") = py::none(), py::arg("device") = "cpu",
        py::arg("plugins") = std::vector<std::string>{}, py::arg("threads") = 1,
        py::arg("env_options") = std::map<std::string, std::string>{},
        "agent::evaluate on a run directory or checkpoint, as `recur eval` runs it.");
  m.def("evaluate_batch", &evaluate_batch, py::arg("checkpoint"), py::arg("batch"),
        py::arg("episodes") = 10, py::arg("seed") = 12345, py::arg("deterministic") = false,
        py::arg("device") = "cpu", "evaluate on Gymnasium envs (a recur.gym_batch.GymBatch).");
  m.def("film", &film, py::arg("checkpoint"), py::arg("batch"), py::arg("path"),
        py::arg("seed") = 0, py::arg("deterministic") = true, py::arg("fps") = 30,
        "One episode of a one-env GymBatch filmed into an MP4 (env.render() rgb_array frames).");
}

}  // namespace recur::python
