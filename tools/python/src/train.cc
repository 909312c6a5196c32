// recur._recur.train: `recur train CONFIG --set k=v ...` as a call. The job runs on its own thread
// while the calling thread waits without the GIL and polls Python's signal handlers, so Ctrl-C
// works as in the CLI: the current update finishes, a checkpoint is written, and then
// KeyboardInterrupt is raised with the run directory in its message.
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <filesystem>
#include <future>
#include <optional>
#include <thread>

#include "agent/record/film.h"
#include "agent/training.h"
#include "bindings.h"
#include "core/error.h"
#include "core/logging.h"
#include "gym_env.h"

namespace recur::python {
namespace {

// make_batch(n, role) -> recur.gym_batch.GymBatch of n envs (role "train", "eval" or "video"),
// or None when it cannot build them; called with the GIL held.
std::unique_ptr<PyBatchEnv> make_py_batch(const py::object& make_batch, int n, const char* role) {
  py::gil_scoped_acquire gil;
  try {
    py::object batch = make_batch(n, role);
    if (batch.is_none()) return nullptr;
    return std::make_unique<PyBatchEnv>(std::move(batch));
  } catch (const py::error_already_set& e) {
    throw std::runtime_error(
        fmt::format("building the {} envs (Python) raised: {}", role, e.what()));
  }
}

}  // namespace

double film_episode(PyBatchEnv& env, const policy::PolicySpec& spec,
                    const policy::TensorMap& tensors, uint64_t seed, bool deterministic,
                    const std::string& path, int fps) {
  envs::render::Frame frame;
  return agent::record::film_episode(
      env,
      [&]() -> const envs::render::Frame& {
        frame = env.render();
        return frame;
      },
      fps, spec, tensors, seed, deterministic, path);
}

namespace {

py::dict train(const std::string& config_path, const std::vector<std::string>& overrides,
               const std::string& resume, const py::object& make_batch, int video_fps,
               std::optional<double> reward_threshold) {
  agent::TrainOptions options;
  options.overrides = overrides;
  options.resume_dir = resume;
  options.handle_sigint = false;  // Python's handler: polled below
  std::atomic<bool> stop{false};
  options.stop_requested = &stop;
  if (!make_batch.is_none()) {
    // Gymnasium envs: training and evaluation envs from make_batch, videos of one env.
    options.env_source = "python";
    options.reward_threshold = reward_threshold;
    options.make_env = [&](int n, bool training) -> std::unique_ptr<envs::BatchEnv> {
      return make_py_batch(make_batch, n, training ? "train" : "eval");
    };
    options.record_video = [&](const std::string& path, const policy::PolicySpec& spec,
                               const policy::TensorMap& tensors, uint64_t eval_seed) {
      auto env = make_py_batch(make_batch, 1, "video");
      RECUR_CHECK(env != nullptr, "the envs given cannot build an env to film");
      return film_episode(*env, spec, tensors, eval_seed, true, path, video_fps);
    };
  }
  // A resumed run uses its own config.yaml (a config given with resume= is not read).
  const std::filesystem::path config_file = resume.empty() ? config_path : "";

  std::packaged_task<agent::TrainResult()> job([&] { return agent::train(config_file, options); });
  auto result_future = job.get_future();
  std::thread worker(std::move(job));
  bool interrupted_by_user = false;
  for (;;) {
    std::future_status status;
    {
      py::gil_scoped_release unlocked;
      status = result_future.wait_for(std::chrono::milliseconds(100));
    }
    if (status == std::future_status::ready) break;
    if (!interrupted_by_user && PyErr_CheckSignals() != 0) {
      // The handler raised (KeyboardInterrupt): ask the job to stop after this update and
      // raise once it has written its checkpoint.
      PyErr_Clear();
      interrupted_by_user = true;
      stop = true;
    }
  }
  worker.join();
  const agent::TrainResult r = result_future.get();  // rethrows the job's exception
  const std::string run_dir = std::filesystem::absolute(r.run_dir).string();
  if (interrupted_by_user) {
    PyErr_SetString(
        PyExc_KeyboardInterrupt,
        ("training interrupted after " + std::to_string(r.env_steps) +
         " env steps; run directory " + run_dir + " (continue with recur.train(resume=...))")
            .c_str());
    throw py::error_already_set();
  }
  py::dict d;
  d["run_dir"] = run_dir;
  d["env_steps"] = r.env_steps;
  d["seconds"] = r.seconds;
  d["final_returns"] = r.final_eval.returns;
  d["final_lengths"] = r.final_eval.lengths;
  return d;
}

}  // namespace

void bind_train(py::module_& m) {
  m.def("train", &train, py::arg("config"), py::arg("overrides") = std::vector<std::string>{},
        py::arg("resume") = "", py::arg("make_batch") = py::none(), py::arg("video_fps") = 30,
        py::arg("reward_threshold") = py::none(),
        "Runs a training job from a YAML config with 'section.key=value' overrides.");
  m.def(
      "set_log_level", [](const std::string& level) { setup_logging(level); }, py::arg("level"),
      "trace, debug, info, warn, error, critical or off (recur logs to stderr).");
}

}  // namespace recur::python
