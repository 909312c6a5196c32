#include "gym_env.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "buffers.h"
#include "core/error.h"

namespace recur::python {
namespace {

// The data pointer of a numpy attribute of `batch`, checked for type and element count.
template <typename T>
T* buffer_of(const py::object& batch, const char* name, size_t count) {
  const Output<T> out(batch.attr(name), name);
  RECUR_ASSERT(out.size() == count);
  return out.span().data();  // the array lives as long as `batch` (GymBatch never replaces it)
}

std::vector<float> floats_of(const py::object& batch, const char* name) {
  const Input<float> in(batch.attr(name), name);
  return {in.span().begin(), in.span().end()};
}

}  // namespace

PyBatchEnv::PyBatchEnv(py::object batch) : batch_(std::make_unique<py::object>(std::move(batch))) {
  const py::object& b = *batch_;
  name_ = b.attr("name").cast<std::string>();
  n_ = b.attr("num_envs").cast<int>();
  obs_dim_ = b.attr("obs_dim").cast<int>();
  same_step_ = b.attr("mode").cast<std::string>() == "SAME_STEP";
  if (!b.attr("reward_threshold").is_none())
    reward_threshold_ = b.attr("reward_threshold").cast<double>();
  obs_space_ = envs::Space::box(floats_of(b, "obs_low"), floats_of(b, "obs_high"));
  if (b.attr("discrete").cast<bool>()) {
    action_space_ = envs::Space::discrete(b.attr("action_n").cast<int64_t>());
    action_width_ = 1;
  } else {
    action_space_ = envs::Space::box(floats_of(b, "action_low"), floats_of(b, "action_high"));
    action_width_ = action_space_.flat_size();
  }
  actions_ = buffer_of<float>(b, "actions", size(action_width_));
  obs_ = buffer_of<float>(b, "obs", size(obs_dim_));
  final_obs_ = buffer_of<float>(b, "final_obs", size(obs_dim_));
  rewards_ = buffer_of<float>(b, "rewards", size(1));
  terminated_ = buffer_of<uint8_t>(b, "terminated", size(1));
  truncated_ = buffer_of<uint8_t>(b, "truncated", size(1));
  episode_start_ = buffer_of<uint8_t>(b, "episode_start", size(1));
  transition_ = buffer_of<uint8_t>(b, "transition", size(1));
  final_return_ = buffer_of<double>(b, "final_return", size(1));
  final_length_ = buffer_of<int>(b, "final_length", size(1));
}

PyBatchEnv::~PyBatchEnv() {
  if (!Py_IsInitialized()) {
    (void)batch_.release();  // the interpreter is gone: leak rather than crash
    return;
  }
  py::gil_scoped_acquire gil;
  batch_.reset();
}

void PyBatchEnv::rethrow(const py::error_already_set& e, const char* during) const {
  throw std::runtime_error(
      fmt::format("{} (Python env) raised during {}: {}", name_, during, e.what()));
}

void PyBatchEnv::reset(uint64_t seed) {
  py::gil_scoped_acquire gil;
  try {
    batch_->attr("reset")(seed);
  } catch (const py::error_already_set& e) {
    rethrow(e, "reset");
  }
  reset_called_ = true;
}

void PyBatchEnv::step(std::span<const float> actions) {
  RECUR_CHECK_ARG(actions.size() == size(action_width_),
                  "{}: actions hold {} floats; expected num_envs {} x {}", name_, actions.size(),
                  n_, action_width_);
  if (!reset_called_) throw std::logic_error(name_ + ": call reset(seed) before step()");
  // Validate the batch before any env moves (as VectorEnv does); Box actions are clipped on the
  // Python side, only their finiteness matters here.
  for (int i = 0; i < n_; ++i) {
    const auto row =
        actions.subspan(static_cast<size_t>(i) * action_width_, static_cast<size_t>(action_width_));
    const bool ok =
        action_space_.is_discrete()
            ? action_space_.contains(row)
            : std::all_of(row.begin(), row.end(), [](float a) { return std::isfinite(a); });
    RECUR_CHECK_ARG(ok, "{}: action of env {} is outside {}", name_, i, action_space_.to_string());
  }
  py::gil_scoped_acquire gil;
  std::copy(actions.begin(), actions.end(), actions_);
  try {
    batch_->attr("step")();
  } catch (const py::error_already_set& e) {
    rethrow(e, "step");
  }
}

envs::render::Frame PyBatchEnv::render() {
  py::gil_scoped_acquire gil;
  py::object frame;
  try {
    frame = batch_->attr("render")();
  } catch (const py::error_already_set& e) {
    rethrow(e, "render");
  }
  RECUR_CHECK(!frame.is_none(),
              "{}: render() returned None; build the env with render_mode=\"rgb_array\" to film it",
              name_);
  py::object array = py::module_::import("numpy").attr("ascontiguousarray")(frame, "uint8");
  const Input<uint8_t> pixels(array, "frame");
  const py::tuple shape = array.attr("shape");
  RECUR_CHECK(shape.size() == 3 && shape[2].cast<int>() == 3,
              "{}: render() gave a frame of shape {}; expected (height, width, 3)", name_,
              py::repr(shape).cast<std::string>());
  envs::render::Frame f;
  f.height = shape[0].cast<int>();
  f.width = shape[1].cast<int>();
  f.pixels.assign(pixels.span().begin(), pixels.span().end());
  return f;
}

}  // namespace recur::python
