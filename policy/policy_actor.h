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
  ~PolicyActor();
  PolicyActor(PolicyActor&&) noexcept;
  PolicyActor& operator=(PolicyActor&&) noexcept;
  const PolicySpec& spec() const { return spec_; }
  int slots() const { return slots_; }

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

  // The GPU side when placed on Device::kCuda (null otherwise): the CUDA learner publishes to it
  // device to device.
  CudaPolicyActor* cuda_actor() { return cuda_.get(); }

 private:
  struct Tower {
    std::unique_ptr<Mlp> encoder;  // null when the spec has no encoder
    std::unique_ptr<StepExecutor> core;
    AlignedVector<float> features, h;  // (B, feature_dim), (B, H)
  };
  // Runs obs -> h for one tower.
  void run_tower(Tower& t, std::span<const uint8_t> episode_start);

  PolicySpec spec_;
  int slots_;
  ObsNormalizer normalizer_;
  Tower actor_, critic_;  // critic_ used only with separate cores
  Mlp actor_head_, critic_head_;
  AlignedVector<float> log_std_;
  AlignedVector<float> nobs_, head_out_;   // (B, obs_dim), (B, actor head width)
  AlignedVector<float> saved_states_;      // (B, state_size): peek_values' save/restore
  std::unique_ptr<CudaPolicyActor> cuda_;  // set on Device::kCuda: then the towers are unused
};

}  // namespace recur::policy
