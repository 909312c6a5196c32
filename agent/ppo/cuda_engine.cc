// The CUDA PPO engine (engine.h): one minibatch of recurrent PPO with every tensor on the GPU.
//
//   begin_update   the rollout's float arrays (T, N, ...) and its stored initial states (N, S)
//                  uploaded once per update; begin_update_gae uploads the rewards and episode
//                  flags instead of the advantages and returns and runs GAE here
//                  (kernels/gae.h), anchor_to_proximal the async anchor (forward passes and
//                  kernels/proximal_anchor.h; with the learner's critic values, GAE again on
//                  them), end_update reads what they computed back once
//   compute        row index (T*B) -> gather obs, actions, old log-probs / values, advantages,
//                  returns -> advantage normalization -> CudaPolicyLearner::evaluate (each
//                  core's initial states gathered on the device from the uploaded table) -> PPO
//                  loss kernel (per-sample gradients + 5 sums) -> backward -> squared grad norm;
//                  ONE synchronization: 6 doubles come back (the loss sums and the norm)
//   apply          the step guard kernel decides the skip and the clip factor on the device
//                  (kernels/step_guard.h, the host's formulas), Adam's bias corrections on the
//                  host, one kernel over every parameter group (scale + Adam) reading the factor
//                  from device memory; nothing comes back
//   step           (deferred steps, engine.h) compute's kernels, the guard and Adam enqueued
//                  together with no synchronization; the guard also keeps the minibatch's 6
//                  sums, read for the whole run by end_steps
//
// The per-sample formulas are kernels/learner_math.h's, shared with the host engine. Reductions
// are deterministic (fixed trees), so a run repeats bit for bit on the same GPU. Adam's moments
// are device buffers in each group's own layout (cuDNN's opaque space for a core) and are saved
// and restored in canonical order, the same tensors the host engine writes.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "agent/dist/communicator.h"
#include "agent/ppo/engine.h"
#include "core/error.h"
#include "kernels/cuda_memory.h"
#include "kernels/gae.h"
#include "kernels/gather.h"
#include "kernels/optimizer.h"
#include "kernels/ppo_loss.h"
#include "kernels/proximal_anchor.h"
#include "kernels/reduction.h"
#include "kernels/step_guard.h"
#include "policy/cuda/cuda_policy_actor.h"
#include "policy/cuda/cuda_policy_learner.h"
#include "policy/policy_actor.h"

namespace recur::agent {
namespace {

class CudaPpoEngine final : public PpoEngine {
 public:
  CudaPpoEngine(const policy::PolicySpec& spec, const policy::Placement& placement, float adam_eps)
      : learner_(spec, placement.sequence),
        adam_eps_(adam_eps),
        fp16_(placement.sequence.data == policy::RnnData::kFp16) {
    const cudaStream_t s = learner_.stream();
    for (const auto& g : learner_.parameter_groups()) {
      RECUR_ASSERT(groups_.count < kernels::kMaxParamSegments);
      Moments mv;
      mv.m.resize(g.size);
      mv.v.resize(g.size);
      mv.m.zero(s);
      mv.v.zero(s);
      kernels::ParamSegment& seg = groups_.segment[groups_.count++];
      seg.values = g.values;
      seg.grads = g.grads;
      seg.m = mv.m.data();
      seg.v = mv.v.data();
      seg.n = static_cast<long long>(g.size);
      names_.push_back(g.name);
      layouts_.push_back(g.layout);
      moments_.push_back(std::move(mv));
    }
    scratch_.resize(static_cast<size_t>(kernels::kReductionScratch));
    sums_.resize(6);
    weights_sq_.resize(1);
    sums_host_.resize(6);
    guard_.resize(1);
    chosen_.resize(1);
    counter_.resize(1);
    counter_host_.resize(1);
    CUDA_CHECK(cudaStreamSynchronize(s));
  }

  policy::Device device() const override { return policy::Device::kCuda; }
  const policy::PolicySpec& spec() const override { return learner_.spec(); }
  void load(const policy::TensorMap& tensors) override { learner_.load(tensors); }
  policy::TensorMap to_tensors() const override { return learner_.to_tensors(); }
  policy::TensorMap gradient_tensors() const override { return learner_.gradient_tensors(); }

  void publish(policy::PolicyActor& actor) override {
    if (actor.groups() > 1) {  // env groups: each group's actor has its own weights
      for (int g = 0; g < actor.groups(); ++g) publish(actor.group(g));
      return;
    }
    policy::CudaPolicyActor* gpu = actor.cuda_actor();
    if (gpu == nullptr || gpu->device() != learner_.device()) {
      PpoEngine::publish(actor);  // canonical tensors: a CPU actor, or another GPU
      return;
    }
    // Same GPU: MLPs and log_std copied as they are, each core's opaque weights gathered into
    // the actor's step layout (the converter's index, on the device).
    policy::CudaPolicyActor::DeviceParameters p;
    for (int c = 0; c < 2; ++c) {
      p.encoder[c] = learner_.encoder_parameters(c);
      p.core[c] = learner_.core_weights(c);
      p.core_layout[c] = learner_.core_layout(c);
    }
    p.actor_head = learner_.actor_head_parameters();
    p.critic_head = learner_.critic_head_parameters();
    p.log_std = learner_.log_std();
    p.stream = learner_.stream();
    gpu->load_weights_device(p);
  }

  void begin_update(const Rollout& r) override { upload(r, false, 0.0f, 0.0f); }

  // The engine's own allocations, copies and launches go to the learner's GPU whichever device
  // the calling thread had current (the learner's own calls set it themselves).

  // Rollout math on the device (engine.h): GAE by kernels/gae.h from the uploaded rewards,
  // values and episode flags, the async anchor by kernels/proximal_anchor.h, and one download of
  // what they computed at the end of the update.
  bool computes_rollout_math() const override { return true; }

  void begin_update_gae(const Rollout& r, float gamma, float lambda) override {
    upload(r, true, gamma, lambda);
  }

  // The forward passes run chunk after chunk with no synchronization between them (each chunk's
  // rows in their own pinned slot); the anchor kernel rewrites the chunk's log-probs and
  // advantages in the uploaded rollout, as the host updater rewrites its arrays. With `values`
  // each chunk's log-probs and critic values are scattered into the rollout's proximal log-probs
  // and its values instead, GAE runs again on those values, and the anchor then weights every
  // row: the host updater's order (its anchor_to_proximal).
  void anchor_to_proximal(int per_mb, bool values) override {
    use_device();
    RECUR_ASSERT(r_ != nullptr && per_mb >= 1 && r_->N % per_mb == 0 && (gae_ || !values));
    const cudaStream_t s = learner_.stream();
    const int chunks = r_->N / per_mb;
    const int m = r_->T * per_mb;
    const int tn = r_->T * r_->N;
    if (values) proximal_.reserve(static_cast<size_t>(tn));
    anchor_cols_.resize(static_cast<size_t>(per_mb));
    for (int c = 0; c < chunks; ++c) {
      std::iota(anchor_cols_.begin(), anchor_cols_.end(), c * per_mb);
      forward(anchor_cols_, s, static_cast<size_t>(c), static_cast<size_t>(chunks));
      if (values)
        kernels::launch_proximal_scatter(rows_.data(), logp_.data(), values_.data(), m,
                                         proximal_.data(), old_values_.data(), s);
      else
        kernels::launch_proximal_anchor(rows_.data(), logp_.data(), m, old_logp_.data(),
                                        advantages_.data(), s);
    }
    if (values) {
      run_gae(s);  // on the learner's values, now in old_values_
      kernels::launch_proximal_anchor(nullptr, proximal_.data(), tn, old_logp_.data(),
                                      advantages_.data(), s);
    }
    values_replaced_ = values;
    learner_.mark("async anchor");
    // The minibatches that follow stage their rows in the same pinned slots.
    CUDA_CHECK(cudaStreamSynchronize(s));
  }

  void end_update(Rollout& r) override {
    use_device();
    RECUR_ASSERT(&r == r_);
    const cudaStream_t s = learner_.stream();
    const auto tn = static_cast<size_t>(r.T) * static_cast<size_t>(r.N);
    advantages_.download(std::span<float>(r.advantages.data(), tn), s);
    returns_.download(std::span<float>(r.returns.data(), tn), s);
    old_logp_.download(std::span<float>(r.log_probs.data(), tn), s);
    if (values_replaced_) old_values_.download(std::span<float>(r.values.data(), tn), s);
    CUDA_CHECK(cudaStreamSynchronize(s));
  }

  // The rollout's arrays to the device, once per update: with `gae`, its advantages and returns
  // are computed here from the rewards, values and episode flags instead of uploaded.
  void upload(const Rollout& r, bool gae, float gamma, float lambda) {
    use_device();
    r_ = &r;
    const cudaStream_t s = learner_.stream();
    // The previous minibatch's copies out of the pinned staging are complete (compute synced).
    auto up = [&](auto& d, const auto& h) {
      d.reserve(h.size());
      d.upload(std::span(h.data(), h.size()), s);
    };
    up(obs_, r.obs);
    up(actions_, r.actions);
    up(old_logp_, r.log_probs);
    up(old_values_, r.values);
    gae_ = gae, gamma_ = gamma, lambda_ = lambda, values_replaced_ = false;
    if (gae) {
      // The CUDA learner trains no rollout with reset steps (the updater refuses them), so GAE
      // reads no transition flags.
      RECUR_ASSERT(!r.has_reset_steps);
      up(rewards_, r.rewards);
      up(bootstrap_values_, r.bootstrap_values);
      up(last_values_, r.last_values);
      up(terminated_, r.terminated);
      up(truncated_, r.truncated);
      const auto tn = static_cast<size_t>(r.T) * static_cast<size_t>(r.N);
      advantages_.reserve(tn);
      returns_.reserve(tn);
      run_gae(s);
    } else {
      up(advantages_, r.advantages);
      up(returns_, r.returns);
    }
    // The stored initial states stay on the device for the update: each minibatch's cores gather
    // theirs with one kernel (kernels/state_gather.h) instead of host copies.
    RECUR_CHECK(r.state_size == learner_.spec().state_size(),
                "the rollout's stored states have {} floats per env, the policy's {}", r.state_size,
                learner_.spec().state_size());
    up(state_table_, r.initial_state);
    // Pageable sources: the copies above have completed when the calls return (or are staged),
    // so the host may reuse the rollout; wait anyway to keep the contract obvious.
    CUDA_CHECK(cudaStreamSynchronize(s));
  }

  // GAE over the uploaded rollout (begin_update_gae's), from the values in old_values_: the
  // stored ones, or the learner's after the anchor replaced them.
  void run_gae(cudaStream_t s) {
    kernels::GaeInputs in;
    in.rewards = rewards_.data();
    in.values = old_values_.data();
    in.terminated = terminated_.data();
    in.truncated = truncated_.data();
    in.bootstrap_values = bootstrap_values_.data();
    in.last_values = last_values_.data();
    kernels::launch_gae(r_->T, r_->N, gamma_, lambda_, in, advantages_.data(), returns_.data(), s);
  }

  // Rows of the (T, N) arrays that make the (T, B) minibatch of env columns `envs` (uploaded to
  // rows_), the host-side episode flags (they shape cuDNN's sub-sequence plan) and the rows of
  // the device state table the envs start from.
  // The rows are staged in pinned slot `slot` (m ints each): a deferred run's step k uses slot
  // k, because the copies of its earlier steps may still be pending (no synchronization between
  // them), as does the async anchor's chunk k (it synchronizes before the steps that follow);
  // compute() and log_probs() synchronize and use slot 0. `slots`: the run's length, the
  // size to grow to (growing frees the old pinned block, so the stream is drained first).
  void stage_rows(std::span<const int> envs, cudaStream_t s, size_t slot = 0, size_t slots = 1) {
    const Rollout& r = *r_;
    const int T = r.T, N = r.N, B = static_cast<int>(envs.size());
    const auto m = static_cast<size_t>(T) * static_cast<size_t>(B);
    if (rows_host_.size() < (slot + 1) * m) {
      CUDA_CHECK(cudaStreamSynchronize(s));
      rows_host_.reserve(std::max(slot + 1, slots) * m);
    }
    int32_t* rows = rows_host_.data() + slot * m;
    starts_.resize(m);
    for (int t = 0; t < T; ++t)
      for (int j = 0; j < B; ++j) {
        const size_t src = static_cast<size_t>(t) * N + static_cast<size_t>(envs[j]);
        rows[static_cast<size_t>(t) * B + j] = static_cast<int32_t>(src);
        starts_[static_cast<size_t>(t) * B + j] = r.episode_start[src];
      }
    table_rows_.assign(envs.begin(), envs.end());
    rows_.reserve(m);
    rows_.upload(std::span<const int32_t>(rows, m), s);
  }

  // The forward pass of compute() alone (same row gather, same stored states and resets); the
  // (T, B) log-probs come back to the host. Compiled only: no GPU has run it yet.
  void log_probs(std::span<const int> envs, std::span<float> out,
                 std::span<float> values) override {
    use_device();
    RECUR_ASSERT(r_ != nullptr);
    RECUR_ASSERT(out.size() == static_cast<size_t>(r_->T) * envs.size());
    RECUR_ASSERT(values.empty() || values.size() == out.size());
    const cudaStream_t s = learner_.stream();
    forward(envs, s);
    logp_.download(out, s);
    if (!values.empty()) values_.download(values, s);
    CUDA_CHECK(cudaStreamSynchronize(s));
  }

  // compute()'s forward alone, enqueued: the (T, B) log-probs of env columns `envs` in logp_ (and
  // their rows in rows_), the rows staged in pinned slot `slot` of `slots` (stage_rows).
  void forward(std::span<const int> envs, cudaStream_t s, size_t slot = 0, size_t slots = 1) {
    const Rollout& r = *r_;
    const int T = r.T, B = static_cast<int>(envs.size());
    const auto m = static_cast<size_t>(T) * static_cast<size_t>(B);
    stage_rows(envs, s, slot, slots);
    mb_obs_.reserve(m * static_cast<size_t>(r.obs_dim));
    kernels::launch_gather_rows(obs_.data(), mb_obs_.data(), rows_.data(), static_cast<int>(m),
                                r.obs_dim, s);
    mb_actions_.reserve(m * static_cast<size_t>(r.action_dim));
    kernels::launch_gather_rows(actions_.data(), mb_actions_.data(), rows_.data(),
                                static_cast<int>(m), r.action_dim, s);
    for (auto* b : {&logp_, &ent_, &values_}) b->reserve(m);
    learner_.evaluate(T, B, mb_obs_.data(), mb_actions_.data(), starts_, state_table_.data(),
                      static_cast<size_t>(r.state_size), table_rows_, logp_.data(), ent_.data(),
                      values_.data());
  }

  MinibatchResult compute(std::span<const int> envs, const kernels::PpoLossConfig& loss,
                          bool normalize_advantage) override {
    enqueue_compute(envs, loss, normalize_advantage);
    const cudaStream_t s = learner_.stream();
    // The only synchronization of the minibatch: six doubles.
    sums_.download(std::span<double>(sums_host_.data(), kernels::kStepSums), s);
    learner_.mark("loss sums out");
    CUDA_CHECK(cudaStreamSynchronize(s));
    return result_of(sums_host_.data(), last_m_, loss);
  }

  // What compute() returns, from the 6 sums its kernels leave (the step guard's doubles).
  static MinibatchResult result_of(const double* h, int m, const kernels::PpoLossConfig& loss) {
    const double inv_m = 1.0 / static_cast<double>(m);
    MinibatchResult out;
    out.policy_loss = h[0] * inv_m;
    out.value_loss = h[1] * inv_m;
    out.entropy = h[2] * inv_m;
    out.approx_kl = h[3] * inv_m;
    out.clip_fraction = h[4] * inv_m;
    out.loss = out.policy_loss + loss.vf_coef * out.value_loss - loss.ent_coef * out.entropy;
    out.grad_norm = std::sqrt(h[5]);
    return out;
  }

  // compute()'s device work, enqueued only: the loss sums and the squared norm end in sums_.
  void enqueue_compute(std::span<const int> envs, const kernels::PpoLossConfig& loss,
                       bool normalize_advantage, size_t slot = 0, size_t slots = 1) {
    use_device();
    RECUR_ASSERT(r_ != nullptr);
    const Rollout& r = *r_;
    const cudaStream_t s = learner_.stream();
    const int T = r.T, B = static_cast<int>(envs.size());
    const auto m = static_cast<size_t>(T) * static_cast<size_t>(B);
    const int adim = r.action_dim;

    learner_.mark(policy::StageMarker::kStart);
    stage_rows(envs, s, slot, slots);
    learner_.mark("rows in (host plan + upload)");

    auto gather = [&](const kernels::DeviceBuffer<float>& src, kernels::DeviceBuffer<float>& dst,
                      int width) {
      dst.reserve(m * static_cast<size_t>(width));
      kernels::launch_gather_rows(src.data(), dst.data(), rows_.data(), static_cast<int>(m), width,
                                  s);
    };
    gather(obs_, mb_obs_, r.obs_dim);
    gather(actions_, mb_actions_, adim);
    gather(old_logp_, mb_old_logp_, 1);
    gather(old_values_, mb_old_values_, 1);
    gather(advantages_, mb_adv_, 1);
    gather(returns_, mb_returns_, 1);
    if (normalize_advantage && m > 1)
      kernels::launch_normalize_advantages(mb_adv_.data(), static_cast<int>(m), scratch_.data(), s);
    learner_.mark("gathers + advantage normalization");

    for (auto* b : {&logp_, &ent_, &values_, &d_logp_, &d_ent_, &d_values_}) b->reserve(m);
    learner_.zero_gradients();
    learner_.mark("zero gradients");
    learner_.evaluate(T, B, mb_obs_.data(), mb_actions_.data(), starts_, state_table_.data(),
                      static_cast<size_t>(r.state_size), table_rows_, logp_.data(), ent_.data(),
                      values_.data());
    kernels::launch_ppo_loss(logp_.data(), mb_old_logp_.data(), mb_adv_.data(), values_.data(),
                             mb_old_values_.data(), mb_returns_.data(), ent_.data(),
                             static_cast<int>(m), loss, d_logp_.data(), d_ent_.data(),
                             d_values_.data(), sums_.data(), scratch_.data(), s);
    learner_.mark("ppo loss");
    learner_.backward(d_logp_.data(), d_ent_.data(), d_values_.data());
    kernels::launch_grad_sq_norm(groups_, sums_.data() + 5, scratch_.data(), s);
    learner_.mark("grad norm");
    last_m_ = static_cast<int>(m);
    last_loss_ = loss;
  }

  // The parameter groups' gradients are gathered into one flat device buffer (with `extra` at
  // its end), averaged in one collective (NCCL where the build has it, else staged through host
  // MPI: Debian's Open MPI is not CUDA-aware), scattered back, and their norm taken again.
  double average_gradients(dist::Communicator& comm, std::span<float> extra,
                           float weight) override {
    use_device();
    // Unequal rollouts (dist.sync_frac) train on the host learner only (Trainer checks).
    RECUR_ASSERT(weight == 1.0f);
    const cudaStream_t s = learner_.stream();
    size_t total = extra.size();
    for (int k = 0; k < groups_.count; ++k) total += static_cast<size_t>(groups_.segment[k].n);
    flat_.reserve(total);
    size_t at = 0;
    for (int k = 0; k < groups_.count; ++k) {
      const auto n = static_cast<size_t>(groups_.segment[k].n);
      CUDA_CHECK(cudaMemcpyAsync(flat_.data() + at, groups_.segment[k].grads, n * sizeof(float),
                                 cudaMemcpyDeviceToDevice, s));
      at += n;
    }
    flat_.upload(std::span<const float>(extra.data(), extra.size()), s, at);
    if (!comm.all_reduce_mean_device(flat_.data(), total, s, "the gradient all-reduce")) {
      flat_host_.resize(total);
      flat_.download(std::span<float>(flat_host_.data(), total), s);
      CUDA_CHECK(cudaStreamSynchronize(s));
      comm.all_reduce_mean(std::span<float>(flat_host_.data(), total), "the gradient all-reduce");
      flat_.upload(std::span<const float>(flat_host_.data(), total), s);
    }
    at = 0;
    for (int k = 0; k < groups_.count; ++k) {
      const auto n = static_cast<size_t>(groups_.segment[k].n);
      CUDA_CHECK(cudaMemcpyAsync(groups_.segment[k].grads, flat_.data() + at, n * sizeof(float),
                                 cudaMemcpyDeviceToDevice, s));
      at += n;
    }
    flat_.download(extra, s, at);
    kernels::launch_grad_sq_norm(groups_, sums_.data() + 5, scratch_.data(), s);
    sums_.download(std::span<double>(sums_host_.data() + 5, 1), s, 5);
    CUDA_CHECK(cudaStreamSynchronize(s));
    return std::sqrt(sums_host_.data()[5]);
  }

  // The factor is decided on the device from the sums the last compute() (or
  // average_gradients()) left in sums_: kernels::step_guard is the updater's non-finite test and
  // kernels::clip_scale on the same doubles, so it equals clip_scale(grad_norm, max_grad_norm)
  // bit for bit (grad_norm = sqrt(sums_[5]) is what compute() returned). The updater calls apply
  // only for finite minibatches, so the guard's skip does not fire here (the deferred steps'
  // guard is what decides skips without a host read).
  void apply(double /*grad_norm*/, double max_grad_norm, double lr) override {
    use_device();
    RECUR_ASSERT(last_m_ > 0);
    ++step_;
    const kernels::AdamCoefficients a =
        kernels::adam_coefficients(0.9f, 0.999f, adam_eps_, lr, step_);
    const cudaStream_t s = learner_.stream();
    kernels::launch_step_guard(sums_.data(), last_m_, last_loss_, max_grad_norm, guard_.data(),
                               nullptr, s);
    kernels::launch_scale_and_adam(groups_, guard_.data(), a, s);
    learner_.mark("step guard + clip + adam");
  }

  // Deferred steps (engine.h): Adam's bias corrections for the run's steps step_+1..step_+count
  // go up once; each step's guard picks the next by the device count of steps taken, so a skip
  // does not advance it, as the per-minibatch flow does not call apply() then. The records (the
  // 6 sums of each minibatch) and the count come back in end_steps: one synchronization per run.
  bool defers_steps() const override { return true; }

  void begin_steps(int count, double max_grad_norm, double lr, bool stop_on_nonfinite) override {
    use_device();
    RECUR_ASSERT(count >= 1);
    const cudaStream_t s = learner_.stream();
    if (run_steps_ != 0) {
      // A run left unread (an error between its steps): its results are dropped, but the steps
      // it took changed the weights and moments, so Adam's count takes them.
      counter_.download(std::span<kernels::StepCounter>(counter_host_.data(), 1), s);
      CUDA_CHECK(cudaStreamSynchronize(s));
      step_ += counter_host_.data()[0].applied;
      run_steps_ = 0;
    }
    run_count_ = count;
    run_max_grad_norm_ = max_grad_norm;
    run_stop_ = stop_on_nonfinite;
    const auto n = static_cast<size_t>(count);
    // The pinned coefficients of the last run were copied: end_steps synchronized.
    coefficients_host_.reserve(n);
    for (int i = 0; i < count; ++i)
      coefficients_host_.data()[i] =
          kernels::adam_coefficients(0.9f, 0.999f, adam_eps_, lr, step_ + 1 + i);
    coefficients_.reserve(n);
    coefficients_.upload(std::span<const kernels::AdamCoefficients>(coefficients_host_.data(), n),
                         s);
    records_.reserve(n * kernels::kStepSums);
    records_host_.reserve(n * kernels::kStepSums);
    run_m_.clear();
    run_loss_.clear();
    run_m_.reserve(n);
    run_loss_.reserve(n);
    counter_.zero(s);
  }

  void step(std::span<const int> envs, const kernels::PpoLossConfig& loss,
            bool normalize_advantage) override {
    RECUR_ASSERT(run_steps_ < run_count_);
    const cudaStream_t s = learner_.stream();
    enqueue_compute(envs, loss, normalize_advantage, static_cast<size_t>(run_steps_),
                    static_cast<size_t>(run_count_));
    kernels::launch_deferred_step_guard(
        sums_.data(), last_m_, loss, run_max_grad_norm_, run_stop_, fp16_ && gradient_scale_ > 1.0f,
        coefficients_.data(), run_count_, counter_.data(), guard_.data(), chosen_.data(),
        records_.data() + static_cast<size_t>(run_steps_) * kernels::kStepSums, s);
    kernels::launch_scale_and_adam(groups_, guard_.data(), chosen_.data(), s);
    learner_.mark("step guard + clip + adam");
    run_m_.push_back(last_m_);
    run_loss_.push_back(loss);
    ++run_steps_;
  }

  std::span<const MinibatchResult> end_steps() override {
    use_device();
    const cudaStream_t s = learner_.stream();
    const auto n = static_cast<size_t>(run_steps_) * kernels::kStepSums;
    records_.download(std::span<double>(records_host_.data(), n), s);
    counter_.download(std::span<kernels::StepCounter>(counter_host_.data(), 1), s);
    learner_.mark("step records out");
    CUDA_CHECK(cudaStreamSynchronize(s));
    run_results_.resize(static_cast<size_t>(run_steps_));
    for (size_t i = 0; i < run_results_.size(); ++i)
      run_results_[i] =
          result_of(records_host_.data() + i * kernels::kStepSums, run_m_[i], run_loss_[i]);
    step_ += counter_host_.data()[0].applied;
    run_steps_ = 0;
    return run_results_;
  }

  // fp16 cuDNN data: the updater's loss scale (loss_scale.h) reaches the cores' backward here.
  bool scales_gradients() const override { return fp16_; }
  void set_gradient_scale(float scale) override {
    RECUR_ASSERT(fp16_);
    learner_.set_gradient_scale(scale);
    gradient_scale_ = scale;
  }

  // The sum of squares of every parameter, in double by the gradient norm's reduction pointed at
  // the values: finite exactly when every parameter is (a finite float's square cannot overflow
  // a double, nor can a sum of fewer than 1e230 of them). Layout gaps in a core's opaque buffer
  // are zero (loaded so, and their gradients are zero), so they cannot raise a false alarm.
  bool parameters_finite() override {
    use_device();
    const cudaStream_t s = learner_.stream();
    kernels::ParamSegments values = groups_;
    for (int k = 0; k < values.count; ++k) values.segment[k].grads = values.segment[k].values;
    kernels::launch_grad_sq_norm(values, weights_sq_.data(), scratch_.data(), s);
    weights_sq_.download(std::span<double>(sums_host_.data(), 1), s);
    CUDA_CHECK(cudaStreamSynchronize(s));
    return std::isfinite(sums_host_.data()[0]);
  }

  void set_stage_marker(policy::StageMarker* marker) override { learner_.set_stage_marker(marker); }

  policy::TensorMap optimizer_tensors() const override {
    use_device();
    const cudaStream_t s = learner_.stream();
    policy::TensorMap out;
    for (size_t k = 0; k < names_.size(); ++k) {
      for (int which = 0; which < 2; ++which) {
        const auto& buf = which == 0 ? moments_[k].m : moments_[k].v;
        std::vector<float> own(buf.size());
        buf.download(own, s);
        CUDA_CHECK(cudaStreamSynchronize(s));
        std::vector<float> data = own;
        if (layouts_[k]) {
          data.resize(layouts_[k]->position.size());
          policy::gather_canonical(*layouts_[k], own, data);
        }
        out[(which == 0 ? "optim.adam.m." : "optim.adam.v.") + names_[k]] =
            policy::Tensor({static_cast<int64_t>(data.size())}, data);
      }
    }
    out["optim.adam.step"] = policy::Tensor({1}, {static_cast<float>(step_)});
    return out;
  }

  void load_optimizer_tensors(const policy::TensorMap& tensors) override {
    use_device();
    const cudaStream_t s = learner_.stream();
    for (size_t k = 0; k < names_.size(); ++k) {
      for (int which = 0; which < 2; ++which) {
        const std::string name = (which == 0 ? "optim.adam.m." : "optim.adam.v.") + names_[k];
        auto& buf = which == 0 ? moments_[k].m : moments_[k].v;
        const auto it = tensors.find(name);
        const size_t expected = layouts_[k] ? layouts_[k]->position.size() : buf.size();
        RECUR_CHECK(it != tensors.end() && it->second.data.size() == expected,
                    "optimizer state '{}' is missing or has the wrong size", name);
        std::vector<float> own(buf.size(), 0.0f);  // gaps of a layout stay zero
        if (layouts_[k])
          policy::scatter_canonical(*layouts_[k], it->second.data, own);
        else
          own = it->second.data;
        buf.upload(own, s);
        CUDA_CHECK(cudaStreamSynchronize(s));
      }
    }
    const auto it = tensors.find("optim.adam.step");
    RECUR_CHECK(it != tensors.end() && it->second.data.size() == 1,
                "optimizer state 'optim.adam.step' is missing");
    step_ = static_cast<long long>(it->second.data[0]);
  }

 private:
  void use_device() const { CUDA_CHECK(cudaSetDevice(learner_.device())); }

  struct Moments {
    kernels::DeviceBuffer<float> m, v;
  };

  policy::CudaPolicyLearner learner_;
  float adam_eps_;
  // device.cudnn_data: fp16, and the cores' gradient scale (policy::kFp16GradientScale until the
  // updater sets one): above 1, the deferred steps' guard tolerates its overflow.
  bool fp16_ = false;
  float gradient_scale_ = policy::kFp16GradientScale;
  long long step_ = 0;
  kernels::ParamSegments groups_;
  std::vector<std::string> names_;
  std::vector<const policy::FlatLayout*> layouts_;
  std::vector<Moments> moments_;

  const Rollout* r_ = nullptr;
  // The whole rollout (T, N, ...) and the minibatch (T, B, ...), device.
  kernels::DeviceBuffer<float> obs_, actions_, old_logp_, old_values_, advantages_, returns_;
  // ... and what GAE reads when it runs here (begin_update_gae)
  kernels::DeviceBuffer<float> rewards_, bootstrap_values_, last_values_;
  kernels::DeviceBuffer<uint8_t> terminated_, truncated_;
  std::vector<int> anchor_cols_;  // anchor_to_proximal: one chunk's env columns
  // anchor_to_proximal with values: the (T, N) proximal log-probs, scattered chunk by chunk
  kernels::DeviceBuffer<float> proximal_;
  // The update's rollout math: GAE here (begin_update_gae) and its constants; the anchor
  // replaced the rollout's values (end_update reads them back).
  bool gae_ = false, values_replaced_ = false;
  float gamma_ = 0, lambda_ = 0;
  kernels::DeviceBuffer<float> mb_obs_, mb_actions_, mb_old_logp_, mb_old_values_, mb_adv_,
      mb_returns_;
  kernels::DeviceBuffer<float> logp_, ent_, values_, d_logp_, d_ent_, d_values_;
  kernels::DeviceBuffer<int32_t> rows_;
  kernels::PinnedBuffer<int32_t> rows_host_;
  kernels::DeviceBuffer<double> scratch_, sums_;  // sums_: 5 loss sums, then the squared norm
  kernels::DeviceBuffer<double> weights_sq_;      // parameters_finite(): the values' squares
  kernels::PinnedBuffer<double> sums_host_;
  kernels::DeviceBuffer<float> flat_;  // average_gradients(): every gradient, then `extra`
  std::vector<float> flat_host_;       // ... staged through the host without NCCL
  std::vector<uint8_t> starts_;
  kernels::DeviceBuffer<float> state_table_;  // the rollout's stored states (N, state_size)
  std::vector<int32_t> table_rows_;           // (B) the minibatch's envs: rows of state_table_
  // The step guard (apply): the last compute()'s shape and loss coefficients and the device-side
  // decision.
  int last_m_ = 0;
  kernels::PpoLossConfig last_loss_;
  kernels::DeviceBuffer<kernels::StepGuard> guard_;
  // Deferred steps: the run's shape, Adam's coefficients per step taken, the device count and
  // decision, each step's 6 sums (records_), and its minibatch size and loss coefficients.
  int run_count_ = 0, run_steps_ = 0;
  double run_max_grad_norm_ = 0;
  bool run_stop_ = false;
  kernels::PinnedBuffer<kernels::AdamCoefficients> coefficients_host_;
  kernels::DeviceBuffer<kernels::AdamCoefficients> coefficients_, chosen_;
  kernels::DeviceBuffer<kernels::StepCounter> counter_;
  kernels::PinnedBuffer<kernels::StepCounter> counter_host_;
  kernels::DeviceBuffer<double> records_;
  kernels::PinnedBuffer<double> records_host_;
  std::vector<int> run_m_;
  std::vector<kernels::PpoLossConfig> run_loss_;
  std::vector<MinibatchResult> run_results_;
};

}  // namespace

std::unique_ptr<PpoEngine> make_cuda_ppo_engine(const policy::PolicySpec& spec,
                                                const policy::Placement& placement,
                                                float adam_eps) {
  return std::make_unique<CudaPpoEngine>(spec, placement, adam_eps);
}

}  // namespace recur::agent
