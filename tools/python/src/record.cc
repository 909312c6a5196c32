// recur._recur.record_dataset and record_dataset_gym: `recur record` as a call, both
// agent::record_dataset: on a registered env (recur's own, a plugin's) as the CLI runs it, on a
// Gymnasium env (a recur.gym_batch.GymOne) with it as RecordOptions::outside_env, so both write the
// same Minari 0.5 dataset. Recording runs without the GIL; the env takes it for each reset and
// step.
#include <pybind11/stl.h>

#include <filesystem>
#include <memory>

#include "agent/record/recorder.h"
#include "agent/training.h"
#include "bindings.h"
#include "core/error.h"
#include "gym_env.h"
#include "policy/device_choice.h"

namespace recur::python {
namespace {

namespace fs = std::filesystem;

struct Formats {
  bool minari = true, d4rl = false;
};

// "minari", "d4rl" or "both", as `recur record --format`.
Formats formats_of(const std::string& format) {
  RECUR_CHECK(format == "minari" || format == "d4rl" || format == "both",
              "format '{}': use \"minari\", \"d4rl\" or \"both\"", format);
  return {format != "d4rl", format != "minari"};
}

py::dict summary_dict(const std::string& env_id, const fs::path& dataset, const fs::path& d4rl,
                      const agent::record::RecordSummary& s) {
  py::dict d;
  d["env_id"] = env_id;
  d["dataset"] = dataset.empty() ? py::none() : py::cast(dataset.string());
  d["d4rl"] = d4rl.empty() ? py::none() : py::cast(d4rl.string());
  d["episodes"] = s.returns.size();
  d["steps"] = s.steps;
  d["returns"] = s.returns;
  d["lengths"] = s.lengths;
  d["return_mean"] = s.mean_return();
  d["return_std"] = s.std_return();
  return d;
}

// A registered env: agent::record_dataset (target "" = the uniformly random policy on env_id).
py::dict record_dataset(const std::string& target, const std::string& dataset_id, int episodes,
                        uint64_t seed, bool deterministic, bool record_state,
                        const std::string& env_id, const std::map<std::string, std::string>& env,
                        const std::string& out, bool overwrite, const std::string& format,
                        const std::string& description, const std::string& device,
                        const std::vector<std::string>& plugins) {
  agent::RecordOptions o;
  o.dataset_id = dataset_id;
  o.episodes = episodes;
  o.seed = seed;
  o.deterministic = deterministic;
  o.record_state = record_state;
  o.env_id = env_id;
  o.env_options = to_options(env, "record_dataset env option");
  o.out = out;
  o.overwrite = overwrite;
  const Formats f = formats_of(format);
  o.write_minari = f.minari;
  o.write_d4rl = f.d4rl;
  o.description = description;
  o.device = policy::resolve_device("device", device, policy::query_devices());
  o.plugins = plugins;
  agent::RecordResult r;
  {
    py::gil_scoped_release unlocked;
    r = agent::record_dataset(target, o);
  }
  return summary_dict(r.env_id, r.dataset, r.d4rl, r.summary);
}

// A Gymnasium env: `one` is a recur.gym_batch.GymOne; target "" = the uniformly random policy.
// agent::record_dataset with it as the env from outside the registry (a PyGymEnv named
// "python:<name>", as the run directory of recur.train(config, env=...) says).
py::dict record_dataset_gym(const std::string& target, py::object one,
                            const std::string& dataset_id, int episodes, uint64_t seed,
                            bool deterministic, bool record_state, const std::string& out,
                            bool overwrite, const std::string& format,
                            const std::string& description, const std::string& device) {
  agent::RecordOptions o;
  o.dataset_id = dataset_id;
  o.episodes = episodes;
  o.seed = seed;
  o.deterministic = deterministic;
  o.record_state = record_state;
  o.out = out;
  o.overwrite = overwrite;
  const Formats f = formats_of(format);
  o.write_minari = f.minari;
  o.write_d4rl = f.d4rl;
  o.description = description;
  o.device = policy::resolve_device("device", device, policy::query_devices());
  agent::OutsideEnv& env = o.outside_env;
  env.name = one.attr("name").cast<std::string>();
  env.kind = "a Python Gymnasium env";
  if (!one.attr("env_spec_json").is_none())
    env.env_spec_json = one.attr("env_spec_json").cast<std::string>();
  env.max_episode_steps = one.attr("max_episode_steps").cast<int>();
  if (!one.attr("reward_threshold").is_none())
    env.reward_threshold = one.attr("reward_threshold").cast<double>();
  env.make = [&]() -> std::unique_ptr<envs::Env> {
    py::gil_scoped_acquire gil;  // record_dataset runs without it
    return make_py_gym_env(one, "python:" + env.name);
  };
  agent::RecordResult r;
  {
    py::gil_scoped_release unlocked;
    r = agent::record_dataset(target, o);
  }
  return summary_dict(r.env_id, r.dataset, r.d4rl, r.summary);
}

}  // namespace

void bind_record(py::module_& m) {
  m.def("record_dataset", &record_dataset, py::arg("target"), py::arg("dataset_id"),
        py::arg("episodes") = 10, py::arg("seed") = 0, py::arg("deterministic") = true,
        py::arg("record_state") = false, py::arg("env_id") = "",
        py::arg("env_options") = std::map<std::string, std::string>{}, py::arg("out") = "",
        py::arg("overwrite") = false, py::arg("format") = "minari", py::arg("description") = "",
        py::arg("device") = "cpu", py::arg("plugins") = std::vector<std::string>{},
        "agent::record_dataset: `recur record TARGET` on a registered env.");
  m.def("record_dataset_gym", &record_dataset_gym, py::arg("target"), py::arg("one"),
        py::arg("dataset_id"), py::arg("episodes") = 10, py::arg("seed") = 0,
        py::arg("deterministic") = true, py::arg("record_state") = false, py::arg("out") = "",
        py::arg("overwrite") = false, py::arg("format") = "minari", py::arg("description") = "",
        py::arg("device") = "cpu",
        "`recur record` on one Gymnasium env (a recur.gym_batch.GymOne).");
}

}  // namespace recur::python
