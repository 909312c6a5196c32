#include "gym_env.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "buffers.h"
#include "core/error.h"
#include "envs/registry.h"

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

envs::Space observation_space_of(const py::object& one) {
  return envs::Space::box(floats_of(one, "obs_low"), floats_of(one, "obs_high"));
}

envs::Space action_space_of(const py::object& one) {
  if (one.attr("discrete").cast<bool>())
    return envs::Space::discrete(one.attr("action_n").cast<int64_t>());
  return envs::Space::box(floats_of(one, "action_low"), floats_of(one, "action_high"));
}

// The inverse of SplitMix64's output mix (core/rng.h): xor-shifts undone, multipliers by their
// inverses mod 2^64.
uint64_t unmix(uint64_t z) {
  z ^= (z >> 31) ^ (z >> 62);
  z *= 0x319642b2d24d8ec3ULL;  // 0x94d049bb133111eb^-1
  z ^= (z >> 27) ^ (z >> 54);
  z *= 0x96de1b173f119089ULL;  // 0xbf58476d1ce4e5b9^-1
  z ^= (z >> 30) ^ (z >> 60);
  return z;
}

}  // namespace

std::optional<uint64_t> fresh_seed_of(const Rng& rng) {
  const uint64_t seed = unmix(rng.state()[0]) - 0x9e3779b97f4a7c15ULL;
  if (Rng(seed).state() != rng.state()) return std::nullopt;
  return seed;
}

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

PyGymEnv::PyGymEnv(py::object one)
    : Env(observation_space_of(one), action_space_of(one)),
      one_(std::make_unique<py::object>(std::move(one))) {
  const py::object& o = *one_;
  name_ = o.attr("name").cast<std::string>();
  actions_ = buffer_of<float>(
      o, "actions",
      static_cast<size_t>(action_space().is_discrete() ? 1 : action_space().flat_size()));
  obs_ = buffer_of<float>(o, "obs", static_cast<size_t>(obs_dim()));
  reward_ = buffer_of<double>(o, "reward", 1);
  terminated_ = buffer_of<uint8_t>(o, "terminated", 1);
  truncated_ = buffer_of<uint8_t>(o, "truncated", 1);
}

PyGymEnv::~PyGymEnv() {
  if (!Py_IsInitialized()) {
    (void)one_.release();  // the interpreter is gone: leak rather than crash
    return;
  }
  py::gil_scoped_acquire gil;
  one_.reset();
}

void PyGymEnv::reset_impl(Rng& rng) {
  const std::optional<uint64_t> seed = fresh_seed_of(rng);
  rng.next_u64();  // a later reset() without a seed is not this seed again
  set_max_episode_steps(0);
  py::gil_scoped_acquire gil;
  try {
    one_->attr("reset")(seed ? py::cast(*seed) : py::none());
  } catch (const py::error_already_set& e) {
    throw std::runtime_error(fmt::format("{} (Python env) raised: {}", name_, e.what()));
  }
}

envs::Env::Outcome PyGymEnv::step_impl(std::span<const float> action) {
  py::gil_scoped_acquire gil;
  std::copy(action.begin(), action.end(), actions_);
  try {
    one_->attr("step")();
  } catch (const py::error_already_set& e) {
    throw std::runtime_error(fmt::format("{} (Python env) raised: {}", name_, e.what()));
  }
  // Gymnasium truncated this step: the base class's limit ends the episode here (see header).
  if (*truncated_) set_max_episode_steps(elapsed_steps() + 1);
  return {*reward_, *terminated_ != 0};
}

void PyGymEnv::observe(std::span<float> obs) const {
  std::copy_n(obs_, obs.size(), obs.begin());
}

std::unique_ptr<envs::Env> make_py_gym_env(py::object one, const std::string& id) {
  // A registry of its own: the only way to give an Env its id (Registry::make sets it), and the
  // env is not meant to be found by id anywhere else.
  envs::Registry local;
  envs::EnvSpec spec;
  spec.id = id;
  spec.family = "python";
  spec.summary = "a Gymnasium env from Python";
  spec.factory = [&](OptionReader&) -> std::unique_ptr<envs::Env> {
    return std::make_unique<PyGymEnv>(std::move(one));
  };
  spec.source = "Python";  // max_episode_steps 0: Gymnasium's truncation passes through
  local.add(std::move(spec));
  return local.make(id);
}

}  // namespace recur::python
