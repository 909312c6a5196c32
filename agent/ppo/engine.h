// The device-specific half of a PPO update. PpoUpdater (agent/ppo/updater.h) owns the algorithm's
// control flow (GAE, schedules, shuffling, minibatch env lists, non-finite skips, target-KL early
// stop, statistics); an engine owns the network and the optimizer and does the numeric work of one
// minibatch where the learner lives:
//
//   begin_update(rollout)         the rollout after GAE (a GPU engine uploads it once), or
//   begin_update_gae(rollout)     the rollout before GAE, computed where the learner runs
//   compute(envs, loss config)    gather the env columns, normalize advantages, replay the T steps
//                                 from the stored initial states with the stored resets, PPO loss
//                                 and its gradients (zeroed first), global grad norm
//   apply(norm, max_norm, lr)     global grad-norm clip, one Adam step
//   begin_steps/step/end_steps    the same minibatches without a host read per minibatch
//                                 (the CUDA engine: results read once per update or epoch)
//
// Two engines: the host engine (PolicyLearner + host Adam; its core may run on any device) and
// the CUDA engine (agent/ppo/cuda_engine.cc: encoder, core, heads, loss, clip and Adam all on
// the GPU, only the loss scalars come back). Both take the per-element math from
// kernels/learner_math.h, so they compute the same update.
#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "agent/rollout.h"
#include "kernels/learner_math.h"
#include "policy/device_choice.h"
#include "policy/policy_learner.h"
#include "policy/policy_spec.h"
#include "policy/stage_marker.h"
#include "policy/tensor.h"

namespace recur::policy {
class PolicyActor;
}
namespace recur::agent::dist {
class Communicator;
}

namespace recur::agent {

// One minibatch's loss terms (means over its T * B samples) and the gradient norm.
struct MinibatchResult {
  double policy_loss = 0, value_loss = 0, entropy = 0, approx_kl = 0, clip_fraction = 0;
  double loss = 0;       // policy_loss + vf_coef * value_loss - ent_coef * entropy
  double grad_norm = 0;  // global L2 norm of all gradients, before clipping
};

class PpoEngine {
 public:
  virtual ~PpoEngine() = default;
  virtual policy::Device device() const = 0;
  virtual const policy::PolicySpec& spec() const = 0;

  // The network's parameters by canonical names (obs_norm.* ignored), and back.
  virtual void load(const policy::TensorMap& tensors) = 0;
  virtual policy::TensorMap to_tensors() const = 0;
  // The gradients of the last compute() (before clipping), canonical names: for parity tests.
  virtual policy::TensorMap gradient_tensors() const = 0;
  // Hands the current parameters to the actor: canonical tensors by default; the CUDA engine
  // copies device to device when the actor is on the same GPU.
  virtual void publish(policy::PolicyActor& actor);

  // Profiling only (`recur bench devices --stages`): the CUDA engine marks each stage boundary of
  // compute() and apply() on `marker` (policy/stage_marker.h); the host engine has no stream to
  // mark and ignores it.
  virtual void set_stage_marker(policy::StageMarker* /*marker*/) {}

  virtual void begin_update(const Rollout& rollout) = 0;
  // env columns `envs` of the rollout given to begin_update (B = envs.size()).
  virtual MinibatchResult compute(std::span<const int> envs, const kernels::PpoLossConfig& loss,
                                  bool normalize_advantage) = 0;
  // Log-probabilities of the rollout's actions under the current parameters, for env columns
  // `envs` of the rollout given to begin_update: out is (T, envs.size()), time-major; `values`
  // (the same shape, or empty: not wanted) the critic's values of those steps. Replays the
  // columns as compute() does, without a backward pass: the async mode's proximal policy
  // (algo.async_anchor) and critic (algo.async_anchor_values).
  virtual void log_probs(std::span<const int> envs, std::span<float> out,
                         std::span<float> values) = 0;
  // Data-parallel training (agent/dist/): replaces the gradients of the last compute() with their
  // mean over the ranks of `comm`, together with `extra` (a few scalars riding along, averaged
  // too), in ONE all-reduce of one flat buffer; returns the global L2 norm of the averaged
  // gradients (the norm apply() clips by). Every rank then holds the same gradients. `weight`
  // scales this rank's gradients (and `extra`) first: with ranks of unequal rollouts (DD-PPO's
  // preemption) each rank's share is weighted by its samples (mean weight 1 over the ranks).
  virtual double average_gradients(dist::Communicator& comm, std::span<float> extra,
                                   float weight = 1.0f) = 0;
  // Scales the gradients by clip_scale(grad_norm, max_grad_norm), then one Adam step with lr.
  virtual void apply(double grad_norm, double max_grad_norm, double lr) = 0;

  // Deferred steps (the CUDA engine on one process): the host does not read each minibatch's
  // result before the next one. begin_steps opens a run of at most `count` minibatches; each
  // step() is compute() followed, where the learner lives, by the updater's decision on its
  // result (a non-finite loss or gradient norm skips the step; with stop_on_nonfinite, algo.
  // on_nonfinite: stop, every later step of the run skips too, as the updater throws there) and,
  // when taken, apply(grad_norm, max_grad_norm, lr); skipped steps do not advance Adam's count.
  // end_steps waits for the run and returns each step's MinibatchResult in order (what compute()
  // would have returned), for the updater's statistics, warnings and errors. An engine without
  // them says false and the updater calls compute() and apply() per minibatch.
  virtual bool defers_steps() const { return false; }
  virtual void begin_steps(int count, double max_grad_norm, double lr, bool stop_on_nonfinite);
  virtual void step(std::span<const int> envs, const kernels::PpoLossConfig& loss,
                    bool normalize_advantage);
  virtual std::span<const MinibatchResult> end_steps();

  // Rollout math where the learner runs (the CUDA engine): GAE and the async anchor computed on
  // the engine's device from the raw rollout, with one host read of rollout-sized data per
  // update, at its end. An engine without it says false and the updater computes both on the host
  // before begin_update (it does so anyway for algo.bptt_steps, whose cut needs the advantages).
  //   begin_update_gae(r, gamma, lambda)  begin_update(r), with r's advantages and returns
  //                                       computed here (agent/ppo/gae.h's definition) instead
  //                                       of read
  //   anchor_to_proximal(per_mb, values)  algo.async_anchor: the current policy's log-probs of
  //                                       each chunk of per_mb env columns replace the stored
  //                                       ones and scale the advantages by
  //                                       kernels::anchor_weight (the host updater's formula);
  //                                       with `values` (algo.async_anchor_values) the current
  //                                       critic's values replace the stored ones first and GAE
  //                                       runs again on them (begin_update_gae's gamma and
  //                                       lambda) before the weights scale its advantages
  //   end_update(r)                       writes the update's advantages, returns and log-probs
  //                                       (and values, when the anchor replaced them) back into
  //                                       r (the rollout of begin_update_gae), so the rollout
  //                                       reads as the host flow leaves it
  virtual bool computes_rollout_math() const { return false; }
  virtual void begin_update_gae(const Rollout& r, float gamma, float lambda);
  virtual void anchor_to_proximal(int per_mb, bool values);
  virtual void end_update(Rollout& r);

  // 16-bit gradients under a loss scale (device.cudnn_data: fp16 on the CUDA engine): the factor
  // the cores' backward multiplies dy by before the cast and divides out after
  // (policy/cudnn/cudnn_sequence_executor.h), a power of two >= 1 that the updater adapts
  // (loss_scale.h). Above 1, a minibatch with a finite loss and a non-finite gradient norm is
  // the scale's overflow: the deferred steps skip it without stopping the run, as the updater
  // does. Engines without such gradients say false; set_gradient_scale is then an internal error.
  virtual bool scales_gradients() const { return false; }
  virtual void set_gradient_scale(float scale);

  // Whether every parameter is finite, checked after each update: the CUDA engine tests on the
  // device and reads one double back (to_tensors() would download and convert every weight);
  // the default scans to_tensors(). The updater names the first bad parameter from to_tensors()
  // only when this says false.
  virtual bool parameters_finite();

  // Adam's moments ("optim.adam.m.<group>", "optim.adam.v.<group>", canonical order for a core)
  // and step count ("optim.adam.step"): the same tensors on every device, so runs resume anywhere.
  virtual policy::TensorMap optimizer_tensors() const = 0;
  virtual void load_optimizer_tensors(const policy::TensorMap& tensors) = 0;
};

// The host engine over `learner` (not owned; it must outlive the engine).
std::unique_ptr<PpoEngine> make_host_ppo_engine(policy::PolicyLearner& learner, float adam_eps);
// The host engine owning a PolicyLearner placed by `placement`, with `threads` host threads for
// its towers (PolicyLearner's constructor says when they are used).
std::unique_ptr<PpoEngine> make_host_ppo_engine(const policy::PolicySpec& spec,
                                                const policy::Placement& placement, float adam_eps,
                                                int threads = 1);
// The CUDA engine on placement.sequence.device (cuDNN options from placement.sequence). Throws
// recur::Error in a build without CUDA.
std::unique_ptr<PpoEngine> make_cuda_ppo_engine(const policy::PolicySpec& spec,
                                                const policy::Placement& placement, float adam_eps);

}  // namespace recur::agent
