// PyBatchEnv: a Gymnasium vector env as recur's envs::BatchEnv, through recur.gym_batch.GymBatch
// (the Python half: autoreset modes, space checks, numpy buffers). Each reset/step takes the GIL
// for one Python call (GymBatch.reset / GymBatch.step) and otherwise runs without it, so recur's
// actor and learner compute while other Python threads run. The buffers are GymBatch's numpy
// arrays, read and written in place (no copy on the C++ side beyond the actions).
#pragma once

#include <pybind11/pybind11.h>

#include <cmath>
#include <memory>
#include <optional>
#include <string>

#include "envs/batch_env.h"
#include "envs/env.h"
#include "envs/render/frame.h"
#include "policy/policy_spec.h"
#include "policy/tensor.h"

namespace recur::python {

namespace py = pybind11;

class PyBatchEnv final : public envs::BatchEnv {
 public:
  // `batch`: a recur.gym_batch.GymBatch. Call with the GIL held.
  explicit PyBatchEnv(py::object batch);
  // Takes the GIL to drop the Python references (it may run on recur's training thread).
  ~PyBatchEnv() override;

  int num_envs() const override { return n_; }
  const envs::Space& single_observation_space() const override { return obs_space_; }
  const envs::Space& single_action_space() const override { return action_space_; }
  const std::string& id() const override { return name_; }
  std::optional<double> reward_threshold() const { return reward_threshold_; }

  void reset(uint64_t seed) override;
  void step(std::span<const float> actions) override;
  // Env 0's rgb_array frame (GymBatch.render); recur::Error when the env renders none.
  envs::render::Frame render();

  std::span<const float> obs() const override { return {obs_, size(obs_dim_)}; }
  std::span<const float> rewards() const override { return {rewards_, size(1)}; }
  std::span<const uint8_t> terminated() const override { return {terminated_, size(1)}; }
  std::span<const uint8_t> truncated() const override { return {truncated_, size(1)}; }
  std::span<const uint8_t> episode_start() const override { return {episode_start_, size(1)}; }
  std::span<const float> final_obs() const override { return {final_obs_, size(obs_dim_)}; }
  std::span<const double> final_return() const override { return {final_return_, size(1)}; }
  std::span<const int> final_length() const override { return {final_length_, size(1)}; }
  std::span<const uint8_t> transition() const override {
    if (same_step_) return {};
    return {transition_, size(1)};
  }

 private:
  size_t size(int width) const { return static_cast<size_t>(n_) * static_cast<size_t>(width); }
  // Python's exception (with the GIL held) as a std::runtime_error naming the envs.
  [[noreturn]] void rethrow(const py::error_already_set& e, const char* during) const;

  std::unique_ptr<py::object> batch_;  // released under the GIL
  std::string name_;
  int n_ = 0, obs_dim_ = 0, action_width_ = 0;
  bool same_step_ = true;
  std::optional<double> reward_threshold_;
  envs::Space obs_space_, action_space_;
  float *actions_ = nullptr, *obs_ = nullptr, *final_obs_ = nullptr, *rewards_ = nullptr;
  uint8_t *terminated_ = nullptr, *truncated_ = nullptr, *episode_start_ = nullptr,
          *transition_ = nullptr;
  double* final_return_ = nullptr;
  int* final_length_ = nullptr;
  bool reset_called_ = false;
};

// PyGymEnv: one Gymnasium env as recur's envs::Env, through recur.gym_batch.GymOne (its numpy
// buffers, read and written in place), for the Recorder (agent/record/recorder.h). Each
// reset/step takes the GIL for one Python call. Bookkeeping stays in envs::Env:
//  * Seeds: Env::reset(seed) reseeds the env's Rng and does not hand the seed on, but Gymnasium
//    needs it (episode i of a dataset is env.reset(seed=seed + i), replayable in Gymnasium).
//    Rng::reseed's first state word is SplitMix64(seed), which inverts; reset_impl recovers the
//    seed and checks it by reseeding a copy, then draws once from the Rng so that a later
//    reset() without a seed reaches Gymnasium as reset(seed=None).
//  * Time limit: the envs::Env has none (max_episode_steps 0, as made by make_py_gym_env);
//    Gymnasium's own truncation (its TimeLimit, or the env's) passes through: on a truncated
//    step, step_impl sets the limit to the step being taken, so the base class reports
//    truncated on exactly that step; reset_impl clears it again.
class PyGymEnv final : public envs::Env {
 public:
  // `one`: a recur.gym_batch.GymOne. Call with the GIL held.
  explicit PyGymEnv(py::object one);
  // Takes the GIL to drop the Python references.
  ~PyGymEnv() override;

 protected:
  void reset_impl(Rng& rng) override;
  Outcome step_impl(std::span<const float> action) override;
  void observe(std::span<float> obs) const override;

 private:
  std::unique_ptr<py::object> one_;  // released under the GIL
  std::string name_;
  float *actions_ = nullptr, *obs_ = nullptr;
  double* reward_ = nullptr;
  uint8_t *terminated_ = nullptr, *truncated_ = nullptr;
};

// A PyGymEnv with the id `id` (e.g. "python:MyEnv", how messages and datasets name it), made
// through a registry of its own (the process's registry() is not touched).
std::unique_ptr<envs::Env> make_py_gym_env(py::object one, const std::string& id);

// The seed that Rng::reseed(seed) was last given, when `rng` has not drawn since; else nullopt.
std::optional<uint64_t> fresh_seed_of(const Rng& rng);

// Films one episode of `env` (one env; reset with `seed`, actions from Rng(derive_seed(seed, 77)))
// into an MP4 at `path`: agent::record::film_episode (agent/record/film.h) with env.render()'s
// frames, `fps` frames per second; the policy (spec, tensors) acts on the CPU. Returns the
// episode's return. Defined in train.cc.
double film_episode(PyBatchEnv& env, const policy::PolicySpec& spec,
                    const policy::TensorMap& tensors, uint64_t seed, bool deterministic,
                    const std::string& path, int fps);

}  // namespace recur::python
