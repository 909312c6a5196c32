#include "agent/ppo/trainer.h"

#include <spdlog/spdlog.h>

#include <array>
#include <chrono>
#include <cstring>
#include <exception>
#include <thread>

#include "agent/dist/communicator.h"
#include "core/error.h"
#include "core/rng.h"
#include "envs/vector_env.h"

namespace recur::agent {

PpoTrainer::PpoTrainer(const TrainConfig& config, std::unique_ptr<envs::BatchEnv> env,
                       dist::Communicator* comm)
    : config_(config),
      comm_(comm != nullptr && comm->size() > 1 ? comm : nullptr),
      venv_(std::move(env)) {
  const auto report = policy::query_devices();
  actor_placement_ = resolve_placement("device.actor", config.device.actor, config.device, report,
                                       config.policy.core);
  learner_placement_ = resolve_placement("device.learner", config.device.learner, config.device,
                                         report, config.policy.core);
  venv_ = make_batch_env(config, std::move(venv_));
  spec_ = make_policy_spec(config.policy, venv_->single_observation_space(),
                           venv_->single_action_space());
  // The normalizer's bound travels with the policy (checkpoints, eval, ONNX export).
  spec_.obs_clip = config.env.clip_obs;
  Rng init_rng(derive_seed(config.run.seed, 0x1417));
  const policy::TensorMap params = policy::init_policy(spec_, init_rng);
  actor_ = std::make_unique<policy::PolicyActor>(spec_, config.env.num_envs, actor_placement_,
                                                 config.env.groups);
  if (config.env.groups > 1 && config.run.threads < 2)
    spdlog::warn(
        "env.groups = {} with run.threads = 1: no worker thread steps one group while the policy "
        "acts on the other, so nothing overlaps (results are as with the overlap); set "
        "run.threads >= 2",
        config.env.groups);
  actor_->load(params);
  // The learner: on a GPU the whole update runs there (the CUDA engine); on the CPU the host
  // engine.
  auto engine = learner_placement_.device == policy::Device::kCuda
                    ? make_cuda_ppo_engine(spec_, learner_placement_, config.algo.adam_eps)
                    : make_host_ppo_engine(spec_, learner_placement_, config.algo.adam_eps,
                                           config.run.learner_threads);
  engine->load(params);
  // algo.bptt_steps: the actor loop stores the states its training sequences start from.
  if (config.algo.bptt_steps > 0 && config.algo.bptt_steps < config.algo.rollout_steps)
    for (Rollout& r : rollouts_) r.state_every = config.algo.bptt_steps;
  // Rank r of a data-parallel run steps the run's envs r * num_envs.. with their own seeds, and
  // samples actions from its own stream; rank 0 is exactly a one-process run.
  const int rank = comm_ ? comm_->rank() : 0;
  auto* vector = dynamic_cast<envs::VectorEnv*>(venv_.get());
  if (vector)
    vector->reset(config.run.seed, rank * config.env.num_envs);
  else
    venv_->reset(rank == 0 ? config.run.seed : derive_seed(config.run.seed, 0xd157 + rank));
  if (config.env.decorrelate_steps > 0) {
    RECUR_CHECK(vector != nullptr,
                "env.decorrelate_steps = {} needs recur's own envs (registry or plugin): envs "
                "given from outside step all together, not one at a time. Set it to 0.",
                config.env.decorrelate_steps);
    // A resumed run restores its envs' snapshots over this (agent/ppo/trainer_state.cc).
    vector->decorrelate(config.env.decorrelate_steps, derive_seed(config.run.seed, 0xdec0),
                        rank * config.env.num_envs);
  }
  const uint64_t loop_seed =
      rank == 0 ? config.run.seed : derive_seed(config.run.seed, 0xd1570000 + rank);
  loop_ = std::make_unique<ActorLoop>(*venv_, *actor_, loop_seed, config.env.normalize_obs);
  if (comm_) loop_->track_deltas();
  auto& rn = loop_->reward_normalizer();
  rn.enabled = config.env.normalize_reward;
  rn.gamma = config.algo.gamma;
  rn.clip = config.env.clip_reward;
  // DD-PPO's preemption: synchronous collection on the host learner (the counting runs on the
  // collecting thread, which must be the one that talks to the other ranks).
  preempt_ = comm_ != nullptr && config.dist.sync_frac > 0;
  RECUR_CHECK(!preempt_ || learner_placement_.device == policy::Device::kCpu,
              "dist.sync_frac = {} (preemption) needs device.learner: cpu: the CUDA learner "
              "weighs every rank's gradients equally; set dist.sync_frac: 0",
              config.dist.sync_frac);
  ppo_ = std::make_unique<PpoUpdater>(config.algo, std::move(engine), config.run.seed, comm_);
  ppo_->set_unequal_rollouts(preempt_);
  agree_on_current_statistics();
  // Each env ends at most one episode per step: no reallocation while collecting.
  for (auto& ends : ends_)
    ends.reserve(static_cast<size_t>(config.algo.rollout_steps) * config.env.num_envs *
                 (comm_ ? comm_->size() : 1));
}

Iteration PpoTrainer::iterate(const std::function<void(const EpisodeEnd&)>& on_episode) {
  // A run resumed with algo.async off from an async one's checkpoint trains on the rollout it
  // kept, then goes on synchronously.
  if (!config_.algo.async)
    return pending_ ? iterate_async(on_episode, false) : iterate_sync(on_episode);
  return iterate_async(on_episode, true);
}

Iteration PpoTrainer::settle() {
  RECUR_ASSERT(pending_);
  return iterate_async({}, false);
}

double PpoTrainer::collect_into(int slot) {
  const auto t0 = std::chrono::steady_clock::now();
  auto& ends = ends_[slot];
  ends.clear();
  rollout_version_[slot] = actor_version_;
  // DD-PPO's rule (habitat-lab's): after a quarter of the rollout, stop once sync_frac of the
  // ranks have finished theirs.
  std::function<bool(int)> stop_after;
  if (preempt_) {
    const int min_steps = std::max(1, (config_.algo.rollout_steps + 3) / 4);
    const double needed = static_cast<double>(config_.dist.sync_frac) * comm_->size();
    stop_after = [this, min_steps, needed](int t) {
      return t >= min_steps && comm_->peers_done(round_) >= needed;
    };
  }
  loop_->collect(
      config_.algo.rollout_steps, rollouts_[slot], [&](const EpisodeEnd& e) { ends.push_back(e); },
      stop_after);
  if (preempt_) comm_->announce_done(round_);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void PpoTrainer::agree_on_current_statistics() {
  if (!comm_) return;
  const auto& norm = actor_->normalizer();
  agreed_obs_ = dist::Moments(norm.dim());
  agreed_obs_.count = norm.count();
  for (int j = 0; j < norm.dim(); ++j) {
    agreed_obs_.mean[static_cast<size_t>(j)] = norm.mean()[static_cast<size_t>(j)];
    agreed_obs_.m2[static_cast<size_t>(j)] = norm.var()[static_cast<size_t>(j)] * norm.count();
  }
  const auto& rn = loop_->reward_normalizer();
  agreed_reward_ = dist::Moments(1);
  agreed_reward_.count = rn.count;
  agreed_reward_.mean[0] = rn.mean;
  agreed_reward_.m2[0] = rn.var * rn.count;
  loop_->obs_delta().clear();
  loop_->reward_delta().clear();
}

void PpoTrainer::merge_collection(int slot) {
  const int64_t local = static_cast<int64_t>(rollouts_[slot].T) * config_.env.num_envs;
  if (preempt_) comm_->end_round(round_++, "the preemption round");
  if (!comm_) {
    rollout_env_steps_[slot] = loop_->env_steps();
    return;
  }
  std::array<double, 1> steps = {static_cast<double>(local)};
  comm_->all_reduce_sum(steps, "the env-step count");
  global_env_steps_ += static_cast<int64_t>(steps[0]);
  rollout_env_steps_[slot] = global_env_steps_;
  // Every rank merges the same combined delta into the same agreed statistics.
  if (config_.env.normalize_obs) {
    agreed_obs_.add(dist::all_reduce_moments(*comm_, loop_->obs_delta(), "observation statistics"));
    actor_->normalizer().set_statistics(agreed_obs_.mean, agreed_obs_.variance(),
                                        agreed_obs_.count);
    loop_->obs_delta().clear();
  }
  if (auto& rn = loop_->reward_normalizer(); rn.enabled) {
    agreed_reward_.add(
        dist::all_reduce_moments(*comm_, loop_->reward_delta(), "reward statistics"));
    rn.mean = agreed_reward_.mean[0];
    rn.var = agreed_reward_.variance()[0];
    rn.count = agreed_reward_.count;
    loop_->reward_delta().clear();
  }
  // Finished episodes to rank 0 (it writes monitor.csv and the progress statistics), as
  // (run-wide env index, return, length) triples of doubles.
  auto& ends = ends_[slot];
  std::string mine(ends.size() * 3 * sizeof(double), '\0');
  for (size_t k = 0; k < ends.size(); ++k) {
    const double row[3] = {
        static_cast<double>(comm_->rank() * config_.env.num_envs + ends[k].env_index),
        ends[k].episode_return, static_cast<double>(ends[k].length)};
    std::memcpy(mine.data() + k * sizeof row, row, sizeof row);
  }
  const std::vector<std::string> all = comm_->all_gather(mine, "the finished episodes");
  ends.clear();
  if (comm_->rank() != 0) return;
  for (const auto& part : all)
    for (size_t at = 0; at + 3 * sizeof(double) <= part.size(); at += 3 * sizeof(double)) {
      double row[3];
      std::memcpy(row, part.data() + at, sizeof row);
      ends.push_back({static_cast<int>(row[0]), row[1], static_cast<int>(row[2])});
    }
}

double PpoTrainer::all_reduce_seconds() const {
  return ppo_->all_reduce_seconds();
}

void PpoTrainer::learn_from(int slot, Iteration& it) {
  const auto t0 = std::chrono::steady_clock::now();
  const int64_t steps = rollout_env_steps_[slot];
  const double progress =
      static_cast<double>(steps) / static_cast<double>(config_.run.total_env_steps);
  it.policy_lag = static_cast<int>(learner_version_ - rollout_version_[slot]);
  last_update_ = ppo_->update(rollouts_[slot], progress, steps, it.policy_lag);
  const UpdateStats& u = last_update_;
  it.metrics = {u.policy_loss,   u.value_loss,    u.entropy,
                u.approx_kl,     u.clip_fraction, u.explained_variance,
                u.learning_rate, u.grad_norm,     static_cast<double>(u.skipped)};
  ++learner_version_;
  it.learn_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

Iteration PpoTrainer::iterate_sync(const std::function<void(const EpisodeEnd&)>& on_episode) {
  Iteration it;
  it.act_seconds = collect_into(0);
  merge_collection(0);
  for (const auto& e : ends_[0]) {
    ++it.episodes;
    if (on_episode) on_episode(e);
  }
  learn_from(0, it);
  const auto t0 = std::chrono::steady_clock::now();
  ppo_->engine().publish(*actor_);  // learner -> actor through the converter
  actor_version_ = learner_version_;
  it.learn_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  it.env_steps = env_steps();
  it.policy_version = learner_version_;
  return it;
}

Iteration PpoTrainer::iterate_async(const std::function<void(const EpisodeEnd&)>& on_episode,
                                    bool may_collect) {
  using Clock = std::chrono::steady_clock;
  Iteration it;
  auto deliver = [&](int slot) {
    for (const auto& e : ends_[slot]) {
      ++it.episodes;
      if (on_episode) on_episode(e);
    }
    ends_[slot].clear();
  };
  if (!pending_) {
    // Nothing to train on yet (the first iteration, or after settle()): the learner waits.
    it.act_seconds = it.wait_seconds = collect_into(current_);
    merge_collection(current_);
    deliver(current_);
    pending_ = true;
  }
  // Collect the next rollout unless every env step is in (decided after the fill above).
  const bool collect_next = may_collect && env_steps() < config_.run.total_env_steps;
  const int next = 1 - current_;
  // The actor thread owns the VectorEnv, the actor and the loop until it is joined; the learner
  // touches only the PPO updater and rollouts_[current_]. No other state is shared, so an async
  // run is as reproducible as a synchronous one (the pipeline changes which weights act, not
  // when).
  double act_seconds = 0;
  std::exception_ptr actor_error;
  {
    std::jthread actor;  // joined when this scope ends, also when the learner throws
    if (collect_next)
      actor = std::jthread([&] {
        try {
          act_seconds = collect_into(next);
        } catch (...) {
          actor_error = std::current_exception();
        }
      });
    learn_from(current_, it);
    const auto t1 = Clock::now();
    if (actor.joinable()) actor.join();
    it.wait_seconds += std::chrono::duration<double>(Clock::now() - t1).count();
  }
  if (actor_error) std::rethrow_exception(actor_error);
  const auto t2 = Clock::now();
  ppo_->engine().publish(*actor_);  // the actor is idle: it never sees half-written weights
  actor_version_ = learner_version_;
  it.learn_seconds += std::chrono::duration<double>(Clock::now() - t2).count();
  it.act_seconds += act_seconds;
  if (collect_next) {
    merge_collection(next);
    deliver(next);
    current_ = next;
  } else {
    pending_ = false;
  }
  it.env_steps = env_steps();
  it.policy_version = learner_version_;
  return it;
}

const std::vector<MetricColumn>& PpoTrainer::metric_columns() const {
  static const std::vector<MetricColumn> columns = {
      {"policy_loss", "train/policy_gradient_loss"},
      {"value_loss", "train/value_loss"},
      {"entropy", "train/entropy_loss", -1},  // SB3 logs -entropy
      {"approx_kl", "train/approx_kl"},
      {"clip_fraction", "train/clip_fraction"},
      {"explained_variance", "train/explained_variance"},
      {"learning_rate", "train/learning_rate"},
      {"grad_norm", "recur/grad_norm"},
      {"skipped_updates", "recur/skipped_minibatches", 1, true}};
  return columns;
}

bool PpoTrainer::load_policy(const policy::TensorMap& tensors) {
  RECUR_CHECK(!pending_ && learner_version_ == 0,
              "PpoTrainer::load_policy: a policy loads before the first update, not after {}",
              learner_version_);
  ppo_->engine().load(tensors);
  actor_->load(tensors);
  agree_on_current_statistics();
  return true;
}

policy::TensorMap PpoTrainer::policy_tensors() const {
  policy::TensorMap t = ppo_->engine().to_tensors();
  const auto norm = actor_->normalizer().to_tensors("obs_norm.");
  t.insert(norm.begin(), norm.end());
  return t;
}

}  // namespace recur::agent
