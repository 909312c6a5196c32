// The policy on the actor's side: B env slots stepped one timestep at a time through the step
// executor, recurrent state resident inside. act() = normalize -> encoder -> core step -> heads
// -> action (sampled or deterministic), its log-prob and the value. Buffers sized at
// construction: acting allocates nothing.
//
// Placed on Device::kCuda (CUDA builds), everything but the observation normalizer runs on the
// GPU as one enqueue sequence, replayed as one CUDA graph per step (policy/cuda/
// cuda_policy_actor.h); the normalizer stays here on the host (the actor loop updates it every
// step) and the GPU receives the normalized observations.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/rng.h"
#include "policy/aligned.h"
#include "policy/device_choice.h"
#include "policy/executor.h"
#include "policy/mlp.h"
#include "policy/obs_normalizer.h"
#include "policy/policy_spec.h"

namespace recur::policy {

class CudaPolicyActor;  // policy/cuda/cuda_policy_actor.h (CUDA builds)

class PolicyActor {
 public:
  // Device::kCpu: the whole policy on the host. Device::kCuda: the whole policy but the
  // normalizer on placement.step.device (placement.step.use_graph: one CUDA graph per step); in a
  // build without CUDA this throws recur::Error as make_step_executor does.
  PolicyActor(const PolicySpec& spec, int slots, const Placement& placement = {});
  // Double-buffered env groups: the slots are split into `groups` row ranges (group g holds slots
  // [group_begin(g), group_begin(g + 1))), each a PolicyActor of its own (its own step executors,
  // on a GPU its own CUDA graph), so that the actor loop acts on one group while the envs of
  // another step (agent/actor_loop.h). Every call over all slots still works (group by group, in
  // row order: act() draws the random numbers a one-group actor draws); act_group() and
  // peek_group() work on one group's rows. The normalizer is this object's, shared by the groups.
  PolicyActor(const PolicySpec& spec, int slots, const Placement& placement, int groups);
  ~PolicyActor();
  PolicyActor(PolicyActor&&) noexcept;
  PolicyActor& operator=(PolicyActor&&) noexcept;
  const PolicySpec& spec() const { return spec_; }
  int slots() const { return slots_; }
  int groups() const { return groups_.empty() ? 1 : static_cast<int>(groups_.size()); }
  int group_begin(int g) const { return static_cast<int>(int64_t{g} * slots_ / groups()); }
  // One group's actor (the learner publishes weights to each group's GPU actor); with one group,
  // this actor itself.
  PolicyActor& group(int g);

  // Takes every parameter (and the normalizer statistics) from tensors named as init_policy
  // names them; throws recur::Error naming a missing or misshapen tensor.
  void load(const TensorMap& tensors);
  // The network's parameters only (not the normalizer): how the learner publishes new weights.
  void load_weights(const TensorMap& tensors);

  // obs (B, obs_dim) raw; episode_start (B): 1 = the slot's state is zeroed before this step.
  // Writes actions (B, action_dim) (a Discrete action as its index), log_probs (B), values (B).
  // A squashed actor (spec.squash) writes env-unit actions inside [action_low, action_high]
  // (policy::normalize_actions gives the learner's units back) and the log-prob of the
  // normalized action (TanhGaussian; 0 for kTanh, which has no density).
  void act(std::span<const float> obs, std::span<const uint8_t> episode_start, Rng& rng,
           bool deterministic, std::span<float> actions, std::span<float> log_probs,
           std::span<float> values);

  // act() on group g's rows alone: obs (n, obs_dim) raw and every output (n rows) are the
  // group's rows, n = group_begin(g + 1) - group_begin(g). Writes the group's rows of
  // normalized_obs().
  void act_group(int g, std::span<const float> obs, std::span<const uint8_t> episode_start,
                 Rng& rng, bool deterministic, std::span<float> actions, std::span<float> log_probs,
                 std::span<float> values);
  // peek_values() on group g's rows alone (spans as act_group's).
  void peek_group(int g, std::span<const float> obs, std::span<const uint8_t> episode_start,
                  std::span<float> values);

  // Values of obs (B, obs_dim) as the next step would compute them from the current states
  // (zeroed where episode_start is 1), without changing any state: the bootstrap value of a
  // truncated episode's final observation, and the value after the last step of an unroll.
  // Overwrites normalized_obs().
  void peek_values(std::span<const float> obs, std::span<const uint8_t> episode_start,
                   std::span<float> values);

  // The normalized observations of the last act() (B, obs_dim): what the learner replays.
  std::span<const float> normalized_obs() const { return nobs_; }
  ObsNormalizer& normalizer() { return normalizer_; }

  // Recurrent state of all slots (B, spec.state_size()): actor core, then critic core if
  // separate. The actor loop saves it at the start of every unroll.
  void get_states(std::span<float> out) const;
  void set_states(std::span<const float> states);
  void reset(int slot);

  // The GPU side when placed on Device::kCuda (null otherwise, and for an actor of several groups,
  // whose GPU sides are group(g).cuda_actor()): the CUDA learner publishes to it device to device.
  CudaPolicyActor* cuda_actor() { return cuda_.get(); }

 private:
  struct Tower {
    std::unique_ptr<Mlp> encoder;  // null when the spec has no encoder
    std::unique_ptr<StepExecutor> core;
    AlignedVector<float> features, h;  // (B, feature_dim), (B, H)
  };
  // Runs obs -> h for one tower.
  void run_tower(Tower& t, std::span<const uint8_t> episode_start);
  // act() and peek_values() after normalization: the normalized observations are in nobs_.
  void act_normalized(std::span<const uint8_t> episode_start, Rng& rng, bool deterministic,
                      std::span<float> actions, std::span<float> log_probs,
                      std::span<float> values);
  void peek_normalized(std::span<const uint8_t> episode_start, std::span<float> values);
  // Normalizes group g's raw rows `obs` into this actor's nobs_ rows (normalized_obs()) and the
  // group's own nobs_ (what its towers read); returns the group.
  PolicyActor& normalize_group(int g, std::span<const float> obs);
  // Group g's rows of a (slots, width) buffer.
  template <typename T>
  std::span<T> rows(std::span<T> all, int g, size_t width) const {
    const auto b = static_cast<size_t>(group_begin(g)), e = static_cast<size_t>(group_begin(g + 1));
    return all.subspan(b * width, (e - b) * width);
  }

  PolicySpec spec_;
  int slots_;
  ObsNormalizer normalizer_;
  Tower actor_, critic_;  // critic_ used only with separate cores
  Mlp actor_head_, critic_head_;
  AlignedVector<float> log_std_;
  AlignedVector<float> nobs_, head_out_;   // (B, obs_dim), (B, actor head width)
  AlignedVector<float> saved_states_;      // (B, state_size): peek_values' save/restore
  std::unique_ptr<CudaPolicyActor> cuda_;  // set on Device::kCuda: then the towers are unused
  // Set with groups > 1: then this actor keeps only the normalizer and nobs_, and the groups
  // compute (their own normalizers are unused).
  std::vector<std::unique_ptr<PolicyActor>> groups_;
};

}  // namespace recur::policy
