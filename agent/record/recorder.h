// Recording rollouts: runs a policy (a checkpoint's, or the uniformly random one) on one env,
// episode by episode, and fills record::Episode rows for a dataset writer and, for the episodes a
// VideoSchedule picks, renders N+1 frames into an MP4. The sibling of agent/evaluator.h: same
// policy, same recurrent-state handling, but one env and everything kept.
//
//   Recorder rec(config, spec, tensors);          // or Recorder rec(config) for --random
//   Recorder rec(config, std::move(env), spec, tensors);  // an env built elsewhere (Python's)
//   MinariWriter writer(root, info);
//   const RecordSummary s = rec.run([&](const Episode& e) { writer.add(e); });
//   writer.commit();
//
// Seeding (why every episode replays alone): episode i resets its env with seed + i and draws
// its stochastic (or random) actions from its own Rng(derive_seed(seed + i, kActionStream)).
// Episode i is therefore the same whatever else is recorded: `recur eval --video-episodes 3`
// films the episode `recur record` stores as episode_3 with the same seed, and
// env.reset(episode.seed) + the recorded actions replays its observations and rewards.
//
// Recurrent state: the policy's state is zeroed at every reset (episode_start row 0 is 1) and
// carried across the episode's steps. With record_state, row t of policy_state is the state fed
// to the policy with observations[t] (row 0 all zeros): per row the actor core's h of layers
// 0..L-1, then for LSTM its c of layers 0..L-1, then the same for the critic core when the
// policy has a separate one (PolicyActor::get_states' layout; state_dim = spec.state_size()).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "agent/record/episode.h"
#include "core/options.h"
#include "envs/env.h"
#include "policy/device_choice.h"
#include "policy/policy_spec.h"
#include "policy/tensor.h"

namespace recur::policy {
class PolicyActor;
}

namespace recur::agent::record {

// Which episode indices get a video.
struct VideoSchedule {
  enum class Kind {
    kNone,         // no video
    kList,         // the listed episodes (--video-episodes 0,3)
    kEvery,        // 0, every, 2*every, ... (--video-every K)
    kCappedCubic,  // Gymnasium RecordVideo's default: 0, 1, 8, 27, ..., 729, then every 1000th
  };
  Kind kind = Kind::kNone;
  std::vector<int> episodes;  // kList
  int every = 1;              // kEvery

  bool films(int episode) const;
  // "--video-episodes 0,3" -> {0, 3}; recur::Error naming the bad item (not a number >= 0).
  static VideoSchedule list(const std::string& comma_separated);
  static VideoSchedule every_k(int k);  // k >= 1, else recur::Error
  static VideoSchedule capped_cubic() { return {Kind::kCappedCubic, {}, 1}; }
};

// Gymnasium's capped_cubic_video_schedule: perfect cubes below 1000, then multiples of 1000.
bool capped_cubic_schedule(int episode);

struct RecordConfig {
  std::string env_id;
  Options env_options;
  int episodes = 10;
  uint64_t seed = 0;  // episode i: env.reset(seed + i); actions from Rng(derive_seed(seed + i, 77))
  bool deterministic = true;    // most likely action (policies only; --random always samples)
  bool record_state = false;    // fill Episode::policy_state (policies only)
  policy::Placement placement;  // where the policy's core runs
  std::string policy_name = "the policy";  // how messages name it (e.g. the checkpoint path)

  std::string video_dir;                 // empty: no videos
  VideoSchedule video;                   // which episodes are filmed into video_dir
  std::string name_prefix = "rl-video";  // video files: video_file_name(name_prefix, episode)
};

struct RecordSummary {
  std::vector<double> returns;  // per episode, in episode order
  std::vector<int> lengths;
  int64_t steps = 0;
  std::vector<std::string> videos;  // paths written, in episode order
  double mean_return() const;
  double std_return() const;  // population std (ddof 0), as numpy and EvalResult
};

// recur::Error naming both when `spec` (a policy for `policy_name`) cannot act on `env`: the
// observation size or the action space (kind and size) differ.
void check_policy_fits_env(const policy::PolicySpec& spec, const std::string& policy_name,
                           const envs::Env& env);
// The same for an env known by its id and spaces (a batch's single spaces).
void check_policy_fits(const policy::PolicySpec& spec, const std::string& policy_name,
                       const std::string& env_id, const envs::Space& observation_space,
                       const envs::Space& action_space);

class Recorder {
 public:
  // A trained policy: `tensors` holds its parameters and normalizer statistics, as
  // evaluate_policy takes them. Throws recur::Error for an unknown env id, env options the env
  // does not take, or a policy whose spaces do not fit the env's.
  Recorder(const RecordConfig& config, const policy::PolicySpec& spec,
           const policy::TensorMap& tensors);
  // The uniformly random policy: actions sampled from the env's action space.
  explicit Recorder(const RecordConfig& config);
  // The same two on `env`, an env built elsewhere instead of envs::make(config.env_id) (the
  // Python package's adapter of a Gymnasium env); config.env_id and env_options are not used.
  // The recorder owns the env from here on.
  Recorder(const RecordConfig& config, std::unique_ptr<envs::Env> env,
           const policy::PolicySpec& spec, const policy::TensorMap& tensors);
  Recorder(const RecordConfig& config, std::unique_ptr<envs::Env> env);
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  const RecordConfig& config() const { return config_; }
  const envs::Env& env() const { return *env_; }
  bool random_policy() const { return !actor_; }
  // Floats per policy_state row when record_state is on, else 0.
  int state_dim() const;
  // For dataset metadata: "recur-ppo-lstm" (the policy's core) or "random".
  std::string algorithm_name() const;
  // A JSON object saying what acted: the checkpoint and its spec (or "random"), deterministic,
  // the seed rule and the policy_state layout.
  std::string policy_json() const;

  // Episode `index` (0-based; reset seed config.seed + index). With a non-empty video_path, its
  // N+1 frames are encoded into an MP4 there (recur::Error when the env does not render).
  Episode record_episode(int index, const std::string& video_path = "");

  // Episodes 0..config.episodes-1, each handed to `sink` as it ends (may be empty), filming
  // those config.video picks into config.video_dir. If anything throws, the videos written so
  // far are removed before the exception leaves.
  RecordSummary run(const std::function<void(const Episode&)>& sink);

  // The path of episode `index`'s video under config.video_dir.
  std::string video_path(int index) const;

 private:
  // Checks the config and takes `env`, or makes config.env_id's when it is null.
  void init_env(std::unique_ptr<envs::Env> env);
  void init_policy(const policy::PolicySpec& spec, const policy::TensorMap& tensors);
  void check_no_state() const;

  RecordConfig config_;
  std::unique_ptr<envs::Env> env_;
  std::unique_ptr<policy::PolicyActor> actor_;  // null: the random policy
  // act()'s buffers, sized once (batch of one slot).
  std::vector<float> action_, log_prob_, value_, state_;
  std::vector<uint8_t> start_;
};

// The first episode of an evaluation (the one the evaluator runs first in env 0: reset seed
// derive_seed(eval seed, 0)), filmed into `path` with the policy deterministic or not as the
// evaluation: film_episode (agent/record/film.h) on a new env_id env, the parent directory of
// `path` created. Used by `recur train` (run.video_every_evals); it draws from no training RNG.
// Returns the episode's return.
double record_eval_video(const policy::PolicySpec& spec, const policy::TensorMap& tensors,
                         const std::string& env_id, const Options& env_options, uint64_t eval_seed,
                         bool deterministic, const std::string& path);

}  // namespace recur::agent::record
