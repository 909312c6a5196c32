// VectorEnv: N copies of one env stepped in lockstep, with batched float32 buffers.
//
//   VectorEnv venv("CartPole-v1", /*num_envs=*/8);
//   venv.reset(seed);                     // env i is seeded with derive_seed(seed, i)
//   venv.step(actions);                   // actions (N, action_dim), row-major
//   venv.obs(); venv.rewards(); ...       // (N, obs_dim), (N,), ...
//
// Autoreset is Gymnasium's SAME_STEP mode: when env i's episode ends on a step, that step's row
// i of obs() already holds the first observation of the next episode; the last observation of
// the ended episode is in row i of final_obs() (the learner bootstraps from it on truncation),
// its return and length in final_return()/final_length(), and episode_start()[i] is 1 (the next
// step is the first of an episode, so a recurrent policy must reset its state for slot i).
// After reset(), episode_start() is 1 everywhere. No step allocates.
//
// Threads: step_range(begin, end, actions) steps envs [begin, end) only; calls on disjoint ranges
// may run concurrently (each env and each row of every buffer belongs to one index). With
// num_threads > 1, step() itself splits the envs into contiguous chunks that the threads of a
// worker pool claim one at a time (Schedule::kDynamic, the default: a thread that meets a slow
// step, such as an episode reset rebuilding a Box2D world, takes fewer chunks), or into one slice
// per thread (kStatic, kept to measure the difference: the slowest slice sets the step time).
// Results do not depend on the schedule or the thread count: each env has its own RNG and rows.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/options.h"
#include "core/worker_pool.h"
#include "envs/batch_env.h"
#include "envs/env.h"

namespace recur::envs {

class VectorEnv final : public BatchEnv {
 public:
  VectorEnv(const std::string& id, int num_envs, const Options& options = {}, int num_threads = 1);
  // From envs built elsewhere; all must share observation and action spaces.
  explicit VectorEnv(std::vector<std::unique_ptr<Env>> envs, int num_threads = 1);
  ~VectorEnv() override;

  int num_envs() const override { return static_cast<int>(envs_.size()); }
  int num_threads() const { return pool_ ? pool_->size() : 1; }

  enum class Schedule { kDynamic, kStatic };
  // Chunks per thread of the dynamic schedule. 4: a thread's share is cut in 4, so one slow env
  // (a reset costs several steps) leaves a tail of about a quarter share at most, and a thread
  // that is late by a quarter of the step loses a quarter share to the others; finer chunks would
  // only add claims (a CAS each, on the owner's cache line, a shared one when stolen) and chunk
  // borders where two threads write neighbouring rows (false sharing on cheap envs like CartPole).
  static constexpr int kDefaultChunksPerThread = 4;
  // start_step_range cuts its range 4x finer than step() would (chunks of a quarter of step()'s):
  // the calling thread joins late (after its act), so the work left then is shared by the
  // threads only as finely as the chunks are cut. Measured (LunarLander, 1024 envs in two groups,
  // 2 threads, a CPU actor): the act-plus-step time 0.51 s with step()'s chunks, 0.47-0.48 s
  // with chunks 4x and 8x finer, 0.53-0.55 s with one group.
  static constexpr int kRangeChunksPerChunk = 4;
  // Between steps only. chunks_per_thread applies to kDynamic (>= 1); chunks never hold fewer
  // than one env.
  void set_schedule(Schedule schedule, int chunks_per_thread = kDefaultChunksPerThread);
  Schedule schedule() const { return schedule_; }
  int num_chunks() const { return num_chunks_; }  // of one step(); 1 without threads
  // The stepping threads (to tune their WaitBudget); null with one thread.
  WorkerPool* worker_pool() { return pool_.get(); }
  int obs_dim() const { return obs_dim_; }
  int action_dim() const { return action_dim_; }
  const Space& single_observation_space() const override { return envs_[0]->observation_space(); }
  const Space& single_action_space() const override { return envs_[0]->action_space(); }
  const std::string& id() const override { return envs_[0]->id(); }
  Env& env(int i) { return *envs_[static_cast<size_t>(i)]; }
  const Env& env(int i) const { return *envs_[static_cast<size_t>(i)]; }

  void reset(uint64_t seed) override { reset(seed, 0); }
  // Env i gets derive_seed(seed, first_index + i): the envs of rank r of a data-parallel run
  // (first_index = r * num_envs) are the envs r * num_envs.. of one process with all of them.
  void reset(uint64_t seed, int first_index);
  // After reset: env i takes a number of uniformly random actions drawn from [0, max_steps] by
  // Rng(derive_seed(seed, first_index + i)), resetting (unseeded) where an episode ends, so that
  // the envs' episodes no longer start and end together (rlpyt's decorrelating start). Nothing of
  // it is reported: the flags read as after reset() but for episode_start, 1 only where an env's
  // last random step ended an episode; the episodes in progress keep their return and length so
  // far. On the worker threads when there are some.
  void decorrelate(int max_steps, uint64_t seed, int first_index = 0);
  // actions: (num_envs, action_dim). Throws std::invalid_argument on a wrong size or an action
  // outside the space (naming the env index); std::logic_error before reset().
  void step(std::span<const float> actions) override;
  // Steps envs [begin, end) only (validating their rows first); actions is the whole batch.
  void step_range(int begin, int end, std::span<const float> actions);
  // step_range in two halves (double-buffered env groups): start_step_range validates the rows of
  // [begin, end), hands their steps to the worker threads and returns at once; finish_step() helps
  // with what is left and returns when all are stepped (rethrowing an env's error). In between,
  // the caller may read and write every row outside [begin, end) (obs, rewards, flags: rows
  // belong to one index) but must not touch the range's rows or `actions` of the range, nor call
  // another step. Without worker threads the steps all run in finish_step().
  void start_step_range(int begin, int end, std::span<const float> actions);
  void finish_step();
  bool stepping() const { return stepping_; }

  // Every env's snapshot plus the batch flags: restore() continues exactly from here.
  bool can_snapshot() const override { return true; }
  Snapshot snapshot() const override;
  // Returns the number of envs that restarted their episode (Env::restore: envs without a flat
  // state); episode_start() is 1 for those.
  int restore(const Snapshot& snapshot) override;

  std::span<const float> obs() const override { return obs_; }                  // (N, obs_dim)
  std::span<const float> rewards() const override { return rewards_; }          // (N,)
  std::span<const uint8_t> terminated() const override { return terminated_; }  // (N,) 0/1
  std::span<const uint8_t> truncated() const override { return truncated_; }    // (N,) 0/1
  std::span<const uint8_t> episode_start() const override { return episode_start_; }  // (N,) 0/1
  // Rows valid where terminated or truncated on the last step.
  std::span<const float> final_obs() const override { return final_obs_; }         // (N, obs_dim)
  std::span<const double> final_return() const override { return final_return_; }  // (N,)
  std::span<const int> final_length() const override { return final_length_; }     // (N,)

 private:
  // Throws std::invalid_argument naming the env index when a row of [begin, end) is invalid.
  void validate_range(int begin, int end, std::span<const float> actions) const;
  // Steps [begin, end) with rows already validated.
  void advance_range(int begin, int end, std::span<const float> actions);

  std::vector<std::unique_ptr<Env>> envs_;
  int obs_dim_ = 0;
  int action_dim_ = 0;
  bool reset_called_ = false;
  std::vector<float> obs_, rewards_, final_obs_;
  std::vector<uint8_t> terminated_, truncated_, episode_start_;
  std::vector<double> final_return_;
  std::vector<int> final_length_;
  std::unique_ptr<WorkerPool> pool_;
  Schedule schedule_ = Schedule::kDynamic;
  int num_chunks_ = 1;
  std::span<const float> pending_actions_;  // what the pool's chunks step with
  std::function<void(int)> chunk_task_;     // built once: no allocation per step
  // start_step_range's chunks: range_chunks_ pieces of [range_begin_, range_end_).
  int range_begin_ = 0, range_end_ = 0, range_chunks_ = 1;
  std::function<void(int)> range_task_;
  bool stepping_ = false;  // a start_step_range is not finished
};

}  // namespace recur::envs
