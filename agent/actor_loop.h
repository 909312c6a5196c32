// The actor loop: steps the envs (envs::BatchEnv) one timestep at a time through the policy's step
// executor and fills a Rollout. Episode starts reset the policy's slots (the flag goes into the
// step); at each unroll's start the recurrent state of every env is stored; on truncation the value
// of the final observation is computed with that env's current state. Finished episodes are
// reported through a callback (monitor.csv, progress statistics).
#pragma once

#include <functional>
#include <memory>
#include <vector>
#include "policy/aligned.h"

#include "agent/dist/moments.h"
#include "agent/rollout.h"
#include "core/rng.h"
#include "envs/batch_env.h"
#include "envs/vector_env.h"
#include "policy/policy_actor.h"

namespace recur::agent {

struct EpisodeEnd {
  int env_index;
  double episode_return;  // raw (unnormalized) return
  int length;
};

struct RewardNormalizer {  // SB3 VecNormalize's reward scaling: r / std(discounted return)
  bool enabled = false;
  float gamma = 0.99f, clip = 10.0f;
  std::vector<double> running_return;  // (N)
  double mean = 0, var = 1, count = 1e-4;
  // Data-parallel runs: every batch merged into the statistics is also merged here (1 feature),
  // for the ranks to combine (agent/dist/moments.h). Null: not tracked.
  dist::Moments* tracked = nullptr;
  // Merges the batch's discounted returns into the statistics and scales `rewards` in place;
  // `done` (N) restarts an env's running return after this step. `transition` (N, or empty: all)
  // marks the rows that are transitions: a reset step (0, NEXT_STEP autoreset) adds nothing to
  // the statistics and leaves its running return alone. `first` > 0: the spans are the rows
  // first.. of the batch (one env group), and running_return already holds every env's.
  void update_and_scale(std::span<float> rewards, std::span<const uint8_t> done,
                        std::span<const uint8_t> transition = {}, size_t first = 0);
};

// Double-buffered env groups (an actor built with groups = 2, env.groups): the loop acts on one
// group while the other's envs step on the VectorEnv's worker threads (EnvPool's and Sample
// Factory's double buffering), so the policy's act, on a GPU a round trip, hides behind env
// stepping:
//   act A(t); start A(t) | act B(t); finish A(t) | start B(t) | after A(t); act A(t+1);
//   finish B(t) | start A(t+1) | after B(t); act B(t+1) ...
// where "after" takes in a group's step (checks, rewards, episode ends, truncation bootstraps).
// Each group's rows are those of a one-group run but for the statistics' order: a group's
// observations (and rewards) enter the normalizers as it steps, so group A's act at t + 1 is
// normalized without group B's observations of t + 1. With normalization off, a grouped rollout
// has the one-group rollout's actions, observations, rewards and episodes, and its values and
// states up to the rounding of GEMMs over fewer rows (tested). The last step of a rollout does not
// overlap (the next act belongs to the next rollout, after the learner's update).
class ActorLoop {
 public:
  // With actor.groups() > 1, venv must be an envs::VectorEnv (throws recur::Error otherwise).
  ActorLoop(envs::BatchEnv& venv, policy::PolicyActor& actor, uint64_t seed, bool normalize_obs);

  // Fills `rollout` (resized to T x N) and advances the envs by T steps. `stop_after(t)`, asked
  // after each step t < T (t steps done), ends the rollout there when it returns true: the
  // rollout then holds t steps (DD-PPO's preemption of stragglers).
  void collect(int T, Rollout& rollout, const std::function<void(const EpisodeEnd&)>& on_episode,
               const std::function<bool(int)>& stop_after = {});

  RewardNormalizer& reward_normalizer() { return reward_norm_; }
  const RewardNormalizer& reward_normalizer() const { return reward_norm_; }
  // The episode-start flags of the next step and whether the first unroll has run.
  std::span<const uint8_t> next_episode_start() const { return starts_; }
  bool started() const { return started_; }
  void restore_flags(std::span<const uint8_t> starts, bool started) {
    std::copy(starts.begin(), starts.end(), starts_.begin());
    started_ = started;
    // A restored batch is snapshotted mid-episode or restarted: no reset step is pending.
    std::fill(resetting_.begin(), resetting_.end(), 0);
    any_resetting_ = false;
  }
  Rng& rng() { return rng_; }
  const Rng& rng() const { return rng_; }
  // Data-parallel runs: the observation and reward statistics' batches since the last clear(),
  // besides the normalizers themselves (which each rank keeps updating as it collects).
  void track_deltas() {
    obs_delta_ = dist::Moments(venv_.obs_dim());
    reward_delta_ = dist::Moments(1);
    tracking_ = true;
    reward_norm_.tracked = &reward_delta_;
  }
  dist::Moments& obs_delta() { return obs_delta_; }
  dist::Moments& reward_delta() { return reward_delta_; }
  int64_t env_steps() const { return env_steps_; }  // of this batch, N per step
  void set_env_steps(int64_t s) { env_steps_ = s; }

 private:
  // Merges rows [begin, end) of this step's observations (obs: those rows) into the normalizer
  // (and the tracked delta), leaving out the rows of reset steps.
  void update_obs_statistics(std::span<const float> obs, int begin, int end);
  // One group's part of step t: act on its rows and store them in the rollout; step its envs
  // (started, then finished by the VectorEnv's finish_step(): with one group, the whole step in
  // start_step); after the step, the checks, rewards, flags, episode ends and truncation
  // bootstraps of its rows (they read only the group's rows of the VectorEnv's outputs, so the
  // other group may be stepping meanwhile).
  void act_group(int g, int t, Rollout& r);
  void start_step(int g);
  void after_step(int g, int t, Rollout& r,
                  const std::function<void(const EpisodeEnd&)>& on_episode);
  int begin_of(int g) const { return actor_.group_begin(g); }

  envs::BatchEnv& venv_;
  envs::VectorEnv* groups_venv_ = nullptr;  // venv_ when the actor has groups
  policy::PolicyActor& actor_;
  Rng rng_;
  bool normalize_obs_;
  RewardNormalizer reward_norm_;
  bool tracking_ = false;
  dist::Moments obs_delta_, reward_delta_;
  int64_t env_steps_ = 0;
  bool started_ = false;
  std::vector<uint8_t> starts_;  // (N) episode_start for the next step
  // (N) 1 where the next step is a reset step (NEXT_STEP autoreset: the env's episode ended on
  // the last step, and its obs row is still that episode's final observation). Those rows are
  // left out of the observation statistics: the step is no transition.
  std::vector<uint8_t> resetting_;
  bool any_resetting_ = false;
  policy::AlignedVector<float> actions_, log_probs_, values_, boot_obs_, boot_values_, rewards_;
  policy::AlignedVector<float> stat_obs_;  // (N, obs_dim) the rows that enter the statistics
};

}  // namespace recur::agent
