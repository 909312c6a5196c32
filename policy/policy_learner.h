// The policy on the learner's side: whole (T, B) trajectories through the sequence executor.
// evaluate() gives the log-probs of the taken actions, the entropies and the values, from the
// stored initial recurrent states and with the episode-start resets; backward() takes the
// gradients of any scalar loss w.r.t. those three (T, B) outputs and accumulates the gradients
// of every parameter. The learner never sees a layout: parameter_groups() exposes flat
// (values, gradients) pairs for an elementwise optimizer, and to_tensors() the canonical form.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/worker_pool.h"
#include "policy/aligned.h"
#include "policy/convert/flat_layout.h"
#include "policy/device_choice.h"
#include "policy/executor.h"
#include "policy/mlp.h"
#include "policy/policy_spec.h"

namespace recur::policy {

struct ParamGroup {
  std::string name;         // "encoder", "core", "actor", "actor.log_std", "critic", ...
  std::span<float> values;  // in the owner's layout
  std::span<float> grads;   // same layout and length
  // The owner's layout of a core group (canonical for the CPU, cuDNN's opaque buffer on a GPU):
  // optimizer state is saved through it in canonical order, so a checkpoint resumes on any
  // device. Null for groups whose layout is the tensor's own (MLPs, log_std).
  const FlatLayout* layout = nullptr;
};

class PolicyLearner {
 public:
  // The core runs where `placement` says (CPU fused layer or cuDNN); encoder, heads and the
  // loss run on the host. threads >= 2 runs the actor's and the critic's towers (encoder + core)
  // at the same time on two host threads, when they are separate (shared_core false) and on the
  // CPU; they share no data, so the results are bitwise those of one thread.
  explicit PolicyLearner(const PolicySpec& spec, const Placement& placement = {}, int threads = 1);
  ~PolicyLearner();
  const PolicySpec& spec() const { return spec_; }

  // Parameters from tensors named as init_policy names them (obs_norm.* is ignored here: the
  // learner is given normalized observations).
  void load(const TensorMap& tensors);
  // Current parameters, canonical names (without obs_norm.*).
  TensorMap to_tensors() const;

  // obs (T, B, obs_dim) normalized; actions (T, B, action_dim or 1); episode_start (T, B);
  // initial_state (B, spec.state_size()). Outputs (T, B) each.
  void evaluate(int T, int B, std::span<const float> obs, std::span<const float> actions,
                std::span<const uint8_t> episode_start, std::span<const float> initial_state,
                std::span<float> log_probs, std::span<float> entropies, std::span<float> values);

  // Gradients of the loss w.r.t. the last evaluate's outputs, (T, B) each; accumulates.
  void backward(std::span<const float> d_log_probs, std::span<const float> d_entropies,
                std::span<const float> d_values);

  void zero_gradients();
  std::vector<ParamGroup> parameter_groups();
  // Gradients as canonical tensors (same names as to_tensors()).
  TensorMap gradient_tensors() const;

 private:
  struct Tower {
    std::unique_ptr<Mlp> encoder;
    std::unique_ptr<SequenceExecutor> core;
    AlignedVector<float> features, y, d_features, d_y, state0;
  };
  void tower_forward(Tower& t, int T, int B, std::span<const float> obs,
                     std::span<const uint8_t> episode_start, std::span<const float> state0);
  void tower_backward(Tower& t);
  // fn(actor_) and, with a separate critic tower, fn(critic_): on two threads when pool_ exists.
  void for_each_tower(const std::function<void(Tower&)>& fn);
  TensorMap collect(bool gradients) const;

  PolicySpec spec_;
  Tower actor_, critic_;
  std::unique_ptr<WorkerPool> pool_;  // two slices: actor tower, critic tower; null = one thread
  Mlp actor_head_, critic_head_;
  AlignedVector<float> log_std_, log_std_grad_;
  // From the last evaluate.
  int t_ = 0, b_ = 0;
  AlignedVector<float> actions_, head_out_, d_head_, d_y_value_;
};

}  // namespace recur::policy
