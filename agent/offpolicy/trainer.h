// OffPolicyTrainer: recurrent SAC (Box and Discrete actions) and TD3 behind the job's Algorithm
// interface (algo.type sac | td3). The actor steps the envs one timestep at a time through the
// acting policy (PolicyActor: the block cell, CPU or CUDA), every transition goes into the
// sequence replay (with the recurrent states the actor and the critic held, when
// offpolicy.stored_state), and the learner (replay_learner.h) runs its gradient updates on
// replayed (burn_in + seq_len + 1, batch) sequences with the fused sequence executors. The actor
// receives the new weights once per vector step, after that step's updates.
//
// One iterate() = offpolicy.steps_per_iteration env steps (one progress row). Observations are
// stored as the actor saw them (the normalizer is frozen at identity, so only env.clip_obs acts).
#pragma once

#include <memory>
#include <vector>

#include "agent/algorithm.h"
#include "agent/offpolicy/replay_learner.h"
#include "agent/offpolicy/sequence_replay.h"
#include "policy/policy_actor.h"

namespace recur::agent::offpolicy {

class OffPolicyTrainer final : public Algorithm {
 public:
  OffPolicyTrainer(const TrainConfig& config, std::unique_ptr<envs::BatchEnv> env);
  ~OffPolicyTrainer() override;

  const policy::PolicySpec& spec() const override { return spec_; }
  policy::TensorMap policy_tensors() const override;
  policy::Device actor_device() const override { return actor_device_; }
  policy::Device learner_device() const override { return learner_device_; }
  int64_t env_steps() const override { return env_steps_; }
  bool done() const override { return env_steps_ >= config_.run.total_env_steps; }
  const std::vector<MetricColumn>& metric_columns() const override { return columns_; }
  Iteration iterate(const std::function<void(const EpisodeEnd&)>& on_episode) override;
  AlgorithmState save_state() const override;
  void restore_state(const AlgorithmState& state, const policy::TensorMap& policy_tensors) override;
  // run.init_from: the actor, the critics, their targets and SAC's temperature of a run of the
  // same algo.type; the optimizers and the replay start empty, and the warm-up
  // (offpolicy.learning_starts) acts with the loaded actor instead of uniform actions.
  bool starts_from_state() const override { return true; }
  void load_trained(const AlgorithmState& state) override;

  const SequenceReplay& replay() const { return *replay_; }
  const ReplayLearner& learner() const { return *learner_; }

 private:
  void step_envs(const std::function<void(const EpisodeEnd&)>& on_episode, Iteration& it);
  void train(double& learn_seconds);
  void publish();
  void read_states();

  TrainConfig config_;
  std::unique_ptr<envs::BatchEnv> venv_;
  policy::PolicySpec spec_;
  policy::Device actor_device_ = policy::Device::kCpu, learner_device_ = policy::Device::kCpu;
  policy::TensorMap base_;  // the acting policy's tensors that the learner does not own
  std::unique_ptr<policy::PolicyActor> actor_;
  // offpolicy.stored_state: the critic's encoder and core stepped beside the actor, so the
  // replay can hold the critic's state too.
  std::unique_ptr<policy::Mlp> critic_encoder_;
  std::unique_ptr<policy::StepExecutor> critic_core_;
  std::unique_ptr<SequenceReplay> replay_;
  std::unique_ptr<ReplayLearner> learner_;
  ReplayBatch batch_;
  Rng act_rng_, sample_rng_, learn_rng_;
  std::vector<MetricColumn> columns_;
  int64_t env_steps_ = 0;
  double update_credit_ = 0;
  int nonfinite_streak_ = 0;
  int updates_this_step_ = 0;
  // Per vector step, sized once.
  int N_ = 0, d_ = 1;
  policy::AlignedVector<float> obs_, next_obs_, raw_next_, actions_, stored_actions_, log_probs_,
      values_, states_, actor_states_, critic_states_, critic_features_, critic_h_;
  std::vector<uint8_t> starts_;
  // Sums over the updates of the current iteration (averaged into the metrics).
  double sum_critic_ = 0, sum_actor_ = 0, sum_alpha_loss_ = 0, sum_q_ = 0, sum_entropy_ = 0;
  int64_t n_updates_ = 0, n_actor_updates_ = 0;
};

}  // namespace recur::agent::offpolicy
