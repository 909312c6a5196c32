// The replay learner of recurrent SAC (Box and Discrete actions) and TD3: one gradient update
// per call on a batch of replayed (L+1, B) sequences (agent/offpolicy/sequence_replay.h), with
// separate recurrent towers for the actor and the critic (the twin Q heads share the critic's
// tower, as in Ni et al.'s code), target networks by Polyak averaging, and SAC's automatic
// temperature. Every tower runs on the fused sequence executor with BPTT; heads are Mlps.
//
// Rows k = 0..L of a batch are observations, k = 0..L-1 transitions (a_k, r_k, terminated_k,
// loss_mask m_k). The networks run over all L+1 rows, so the output at row k+1 is the one after
// the next observation (the final one where the episode ended at k):
//   SAC    y_k = r_k + gamma (1 - term_k) [min_i Q'_i(hc'_{k+1}, a'_{k+1}) - alpha log
//   pi(a'_{k+1})],
//          a'_{k+1} ~ pi(.|ha_{k+1}) (the current actor), critic loss
//          0.5 sum_i sum_k m_k (Q_i(hc_k, a_k) - y_k)^2 / sum m, actor loss
//          sum_k m_k (alpha log pi(a_k~) - min_i Q_i(hc_k, a_k~)) / sum m (reparameterized, hc
//          held fixed), temperature loss -log(alpha) sum_k m_k (log pi(a_k~) + target) / sum m.
//   SAC (Discrete) takes exact expectations over the actions instead of samples (Christodoulou).
//   TD3    y_k = r_k + gamma (1 - term_k) min_i Q'_i(hc'_{k+1}, clip(mu'(ha'_{k+1}) + clip(noise)))
//          and, every policy_delay updates, actor loss -sum_k m_k Q_1(hc_k, mu(ha_k)) / sum m and
//          the target updates.
// All gradients of one update are taken at the same parameters, then every optimizer steps (the
// losses do not see each other's step within an update). With threads >= 2 (CPU placement) the
// towers' forwards (actor, critic, target critic, TD3's target actor) run two at a time, and the
// actor's backward beside the critic's; they share no data, so the results are bitwise those of
// one thread. The Q heads and the losses between them stay on the calling thread. Actions are in
// normalized units (policy/squashed_action.h); Discrete actions are indices.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "agent/adam.h"
#include "agent/offpolicy/recurrent_tower.h"
#include "agent/offpolicy/sequence_replay.h"
#include "core/rng.h"
#include "core/worker_pool.h"
#include "policy/device_choice.h"
#include "policy/mlp.h"
#include "policy/policy_spec.h"

namespace recur::agent::offpolicy {

enum class Method { kSac, kSacDiscrete, kTd3 };

struct LearnerConfig {
  Method method = Method::kSac;
  float gamma = 0.99f, tau = 0.005f;
  float actor_lr = 3e-4f, critic_lr = 3e-4f, alpha_lr = 3e-4f;
  float init_alpha = 1.0f;
  bool auto_alpha = true;
  float target_entropy = -1.0f;
  int policy_delay = 2;
  float target_noise = 0.2f, target_noise_clip = 0.5f;
  float max_grad_norm = 0.0f;  // 0 = off
  float adam_eps = 1e-8f;
};

// What one update measured (SB3's train/* quantities).
struct UpdateReport {
  double critic_loss = 0, actor_loss = 0, alpha_loss = 0, alpha = 0;
  double q_mean = 0;   // mean Q_1 of the replayed actions (masked)
  double entropy = 0;  // SAC: mean -log pi of the policy's actions; Discrete: exact
  bool actor_updated = false;
};

class ReplayLearner {
 public:
  // spec: the acting policy (squash kTanhGaussian for SAC, kTanh for TD3; Discrete for discrete
  // SAC); the critic copies its encoder, core and head widths. init_rng draws the parameters.
  ReplayLearner(const policy::PolicySpec& spec, const LearnerConfig& config,
                const policy::Placement& placement, Rng& init_rng, int threads = 1);
  ~ReplayLearner();
  const LearnerConfig& config() const { return config_; }
  // Floats of recurrent state a stored-state batch holds per sequence: actor core, then critic.
  int state_size() const;

  // One update: draws the noise, takes every gradient, checks them, steps the optimizers and
  // the targets. Throws NonFiniteUpdate (weights untouched) when a loss or gradient is not finite.
  UpdateReport update(const ReplayBatch& batch, Rng& rng);

  // The pieces, for tests: fill the noise buffers from rng; then zero and take the gradients at
  // the current parameters with that noise (with_actor: TD3's delayed actor gradient too).
  void draw_noise(const ReplayBatch& batch, Rng& rng);
  std::span<float> noise(int which) { return which == 0 ? noise_pi_ : noise_next_; }
  UpdateReport compute_gradients(const ReplayBatch& batch, bool with_actor);

  // The acting policy's network tensors ("encoder.", "core.", "actor.").
  policy::TensorMap actor_tensors() const;
  // Every parameter (online and target) and log_alpha, and their gradients (same names).
  policy::TensorMap parameter_tensors() const;
  policy::TensorMap gradient_tensors() const;
  void load_parameters(const policy::TensorMap& tensors);
  // parameter_tensors() plus the optimizers' moments (resume); the update counter travels apart.
  policy::TensorMap state_tensors() const;
  void load_state(const policy::TensorMap& tensors);
  int64_t updates() const { return updates_; }
  void set_updates(int64_t updates) { updates_ = updates; }
  double alpha() const;
  // Sets SAC's temperature (its log is the learned parameter); its optimizer's moments stay.
  void set_alpha(double alpha);

 private:
  struct Nets;
  void size_buffers(int L, int B);
  void split_states(const ReplayBatch& batch);
  void continuous_targets(const ReplayBatch& batch);
  void discrete_targets(const ReplayBatch& batch);
  void sac_actor_pass(const ReplayBatch& batch, UpdateReport& r);
  void td3_actor_pass(const ReplayBatch& batch, UpdateReport& r);
  void discrete_actor_pass(const ReplayBatch& batch, UpdateReport& r);
  void critic_pass(const ReplayBatch& batch, UpdateReport& r);
  void discrete_critic_pass(const ReplayBatch& batch, UpdateReport& r);
  void check_finite(const UpdateReport& r, bool with_actor) const;
  // fn(i) for i in [0, count): on the pool's two threads when there is one, else in order.
  void run_jobs(int count, const std::function<void(int)>& fn);
  void step_targets(bool with_actor);

  policy::PolicySpec spec_;
  LearnerConfig config_;
  int d_ = 1;      // action floats per row (Discrete: 1, the index)
  int width_ = 1;  // actor head outputs per row
  std::unique_ptr<Nets> nets_;
  std::unique_ptr<WorkerPool> pool_;  // two threads for the towers; null = the calling thread
  std::unique_ptr<Adam> actor_opt_, critic_opt_, alpha_opt_;
  std::vector<policy::ParamGroup> actor_groups_, critic_groups_, alpha_groups_;
  policy::AlignedVector<float> log_alpha_, log_alpha_grad_;
  int64_t updates_ = 0;

  // Workspace, sized by the first batch.
  int L_ = 0, B_ = 0;
  policy::AlignedVector<float> state_a_, state_c_;            // (B, S_a), (B, S_c)
  policy::AlignedVector<float> noise_pi_, noise_next_;        // (L+1, B, d)
  policy::AlignedVector<float> head_, target_head_, d_head_;  // (L+1, B, width)
  policy::AlignedVector<float> y_;                            // (L, B) TD targets
  policy::AlignedVector<float> qin_, q1_, q2_, dq1_, dq2_, dqin_;
  policy::AlignedVector<float> act_, logp_;   // (L+1, B, d), (L+1, B)
  policy::AlignedVector<float> d_hc_, d_ha_;  // (L+1, B, H)
};

}  // namespace recur::agent::offpolicy
