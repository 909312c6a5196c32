// recur's training API: what `recur train`, `recur eval` and `recur record` do, as calls, for a
// program that registers envs of its own (envs::registry().add) or loads plugins, and trains,
// evaluates and records them in-process. The CLI commands are thin callers of the same code
// (recur train calls train()), so a run made here and one made by the CLI are the same: run
// directory <run.output_dir>/<name>-<time>/ with config.yaml, progress.csv, monitor.csv,
// eval.csv, tb/ and checkpoints/ (latest, best, periodic), resumable either way.
//
//   recur::envs::registry().add(my_spec);                        // source = "program"
//   const auto run = recur::agent::train("my_env.yaml", {.overrides = {"run.seed=3"}});
//   const auto eval = recur::agent::evaluate(run.run_dir.string(), {.episodes = 20});
//   recur::agent::RecordOptions rec{.dataset_id = "me/my-env/ppo-v0", .episodes = 10};
//   recur::agent::record_dataset(run.run_dir.string(), rec);
//
// Errors (bad config, unknown env, unwritable directory, ...) are recur::Error with a message
// that names the file, key or path; nothing here exits the process, with one exception: in a
// data-parallel job (config `dist`, more than one rank) a rank whose train() fails logs why and
// ends every rank of the job through MPI_Abort (exit status 2 for a recur::Error, 3 otherwise),
// as does a rank that waits in a collective longer than dist.timeout_s, because the other ranks
// may be blocked in a collective waiting for it (agent/dist/communicator.h).
//
// Ctrl-C: with TrainOptions::handle_sigint, the first SIGINT during train() finishes the current
// update, writes a checkpoint and makes train() return with `interrupted` set (resume with
// TrainOptions::resume_dir); a second SIGINT ends the process as usual. The previous SIGINT
// handler is restored when train() returns. One train() at a time should handle SIGINT.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/config/config.h"
#include "agent/evaluator.h"
#include "agent/record/recorder.h"
#include "core/options.h"
#include "envs/batch_env.h"
#include "envs/env.h"
#include "policy/device_choice.h"
#include "policy/policy_spec.h"
#include "policy/tensor.h"

namespace recur::agent {

struct PolicyTarget;  // agent/policy_target.h

struct TrainOptions {
  // "section.key=value", applied in order on top of the config file, as `recur train --set`.
  // Only with a config file (or resume_dir): a TrainConfig is set field by field.
  std::vector<std::string> overrides = {};
  // Env plugin files (envs/plugin.h) appended to env.plugin, as `recur train --plugin`: each made
  // absolute against the working directory, and left out when env.plugin already names it.
  std::vector<std::string> plugins = {};
  // Continue the run in this directory from its latest checkpoint, with its config.yaml plus
  // `overrides` (e.g. a larger run.total_env_steps); train() then takes no config file.
  std::filesystem::path resume_dir = {};
  // The run directory's name: <run.output_dir>/<name>-<time>. Empty: run.name, else the config
  // file's stem, else "run".
  std::string name = {};
  bool handle_sigint = true;  // Ctrl-C stops the run cleanly (see above)
  // Set it (from any thread or a signal handler) to stop like Ctrl-C; SIGINT sets it too.
  std::atomic<bool>* stop_requested = nullptr;
  int64_t stop_at_env_steps = 0;  // stop like Ctrl-C once reached (0: run.total_env_steps only)

  // Envs from outside recur's registry (the Python package's Gymnasium envs); env.id then only
  // names them. make_env(n, true) builds the n = env.num_envs training envs, make_env(n, false)
  // n evaluation envs (null: the run skips its evaluations, with a warning). Not with dist.
  std::function<std::unique_ptr<envs::BatchEnv>(int num_envs, bool training)> make_env = {};
  // Checkpoint metadata run.env_source: where make_env's envs come from (e.g. "python");
  // `recur eval` refuses such a checkpoint without an env id of its own.
  std::string env_source = {};
  std::optional<double> reward_threshold = {};  // with make_env: the target when
                                                // run.target_return is null
  // With make_env: films the evaluation's first episode (run.video_every_evals) into `path` with
  // the policy (spec, tensors) deterministic, as record::film_episode (agent/record/film.h) with
  // seed eval_seed does; returns the episode's return. Empty: no videos. (Registered envs are
  // filmed by the job itself, with record::record_eval_video.)
  std::function<double(const std::string& path, const policy::PolicySpec& spec,
                       const policy::TensorMap& tensors, uint64_t eval_seed)>
      record_video = {};
};

// Episodes in progress.csv's return statistics (as SB3's rollout/ep_rew_mean), and so in the
// training mean's time to target.
inline constexpr size_t kReturnWindow = 100;

// What a training job did.
struct TrainJobResult {
  std::filesystem::path run_dir;
  int64_t env_steps = 0;
  double seconds = 0;        // wall time of training, over every segment (resumes) of the run
  bool interrupted = false;  // stopped by Ctrl-C or stop_requested; resume with resume_dir
  EvalResult final_eval;     // the final deterministic evaluation; empty when interrupted
  // The time to target: run.target_return, or the env's registered reward threshold; and the
  // first evaluation that reached it: its env step, and the wall seconds of training before it
  // (over every segment, so a resumed run reports the same step as an uninterrupted one).
  std::optional<double> target;
  std::optional<int64_t> target_env_steps;
  double target_seconds = 0;
  // The same for the mean return of the last 100 training episodes (run.target_measure
  // train_mean): the first update after which it reached the target, with a full window.
  std::optional<int64_t> train_target_env_steps;
  double train_target_seconds = 0;
  bool stopped_at_target = false;  // run.stop_at_target ended the run there
  // Wall seconds of each process that trained the run: one for a run never resumed; the last is
  // this call's.
  std::vector<double> segments;
  // A resume of a run that was already complete: nothing was trained or written.
  bool already_complete = false;
  // A data-parallel run (dist.backend: mpi): this process's rank and the number of ranks. Only
  // rank 0 has run_dir and final_eval; env_steps and the target count every rank's steps.
  int rank = 0, world_size = 1;
  double all_reduce_seconds = 0;  // in the gradient all-reduces (0 on one process)
};

// What train() did: the job's result and the config that ran (resolved: what the run
// directory's config.yaml records).
struct TrainResult : TrainJobResult {
  TrainConfig config;
};

// The config a train() call would run: `config_file` (or resume_dir/config.yaml) with the
// overrides and plugins applied, validated. What `recur train --print-config` prints (to_yaml).
TrainConfig resolve_train_config(const std::filesystem::path& config_file,
                                 const TrainOptions& options = {});

// A training job from a YAML config file (empty with resume_dir).
TrainResult train(const std::filesystem::path& config_file, const TrainOptions& options = {});
// A training job from a config built in code (validated here; overrides must be empty).
TrainResult train(const TrainConfig& config, const TrainOptions& options = {});

// A trained policy is named as `recur eval` and `recur record` take it: a run directory (its
// checkpoints/best, else checkpoints/latest) or a checkpoint file. Its env is the one it trained
// on unless env_id overrides it; the env plugins it recorded are loaded (checked unchanged)
// unless `plugins` names the files to load instead.
struct EvaluateOptions {
  int episodes = 10;
  bool deterministic = false;  // most likely action (recur eval --deterministic)
  std::string env_id = {};     // empty: the env the policy trained on
  uint64_t seed = 12345;
  int num_envs = 4;  // envs run in parallel, each an equal share of the episodes
  int threads = 1;   // threads stepping them (the results are the same for any count)
  // Env options on top of the checkpoint's (e.g. LunarLander's enable_wind for a policy trained
  // without): `recur eval --option`. Not with make_env.
  Options env_options = {};
  policy::Device device = policy::Device::kCpu;
  std::vector<std::string> plugins = {};
  // Also film the episodes `video` picks into video_dir as MP4 (recorded alongside, with the
  // seeds record() uses; the returns stay the evaluation's).
  std::string video_dir = {};
  record::VideoSchedule video = record::VideoSchedule::capped_cubic();
  std::string name_prefix = "rl-video";
  // Envs from outside recur's registry (the Python package's Gymnasium envs): the evaluation
  // runs on make_env(num_envs) instead of the policy's env, and a policy trained on such envs
  // needs no env_id. env_id and plugins are then unused, and there are no videos.
  std::function<std::unique_ptr<envs::BatchEnv>(int num_envs)> make_env = {};
};

struct EvaluateResult {
  std::filesystem::path checkpoint;  // the file evaluated
  std::string env_id;
  EvalResult eval;                  // returns and lengths per episode
  std::vector<std::string> videos;  // written, in episode order
};

EvaluateResult evaluate(const std::string& target, const EvaluateOptions& options = {});
// The same on a policy already loaded (agent/policy_target.h; its env plugins loaded by the
// caller): its env_id and env_options are the env evaluated; options.env_id and plugins are
// unused. evaluate(target) is this after loading the target.
EvaluateResult evaluate(const PolicyTarget& target, const EvaluateOptions& options);

// An env from outside recur's registry, as record_dataset records it (the Python package's
// Gymnasium env), and what the dataset's metadata says of it.
struct OutsideEnv {
  // Builds the one env recorded (called once; no time limit of its own needed: its episodes end
  // when it says). Its id() names it in messages and in RecordResult::env_id.
  std::function<std::unique_ptr<envs::Env>()> make = {};
  std::string name = {};  // the dataset's env_id (e.g. Gymnasium's id)
  std::string kind = {};  // the default description's "on <name> (<kind>)": "a Python ... env"
  std::string env_spec_json = {};  // the dataset's env_spec, written as given (empty: none)
  int max_episode_steps = 0;       // the dataset's (0: none)
  std::optional<double> reward_threshold = {};
};

// Episodes of a policy (or, with an empty target, the uniformly random policy on env_id or
// outside_env) as a Minari dataset <out>/<dataset_id>/data/ and/or a D4RL file, as `recur record`.
// The dataset appears under its final name only when every episode is in it.
struct RecordOptions {
  std::string dataset_id = {};  // Minari id, (namespace/)name-vN, e.g. "me/my-env/ppo-v0"
  int episodes = 10;
  uint64_t seed = 0;  // episode i resets with seed + i
  bool deterministic = true;
  bool record_state = false;  // infos/policy_state: the recurrent state fed at each observation
  std::string env_id = {};    // empty: the policy's env (required for the random policy)
  Options env_options = {};   // on top of the checkpoint's
  std::string out = {};    // datasets root; empty: $MINARI_DATASETS_PATH, else ~/.minari/datasets
  bool overwrite = false;  // replace an existing dataset of that id
  bool write_minari = true;
  bool write_d4rl = false;
  policy::Device device = policy::Device::kCpu;
  std::vector<std::string> plugins = {};
  std::string video_dir = {};  // empty: no videos
  record::VideoSchedule video = record::VideoSchedule::capped_cubic();
  std::string name_prefix = "rl-video";
  std::string description = {};  // dataset metadata; empty: says what was recorded
  // With outside_env.make: record that env instead of a registered one (env_id, env_options and
  // plugins must be empty); a policy trained on envs from outside the registry is accepted.
  OutsideEnv outside_env = {};
};

struct RecordResult {
  std::string env_id;             // the env recorded
  std::filesystem::path dataset;  // <out>/<dataset_id>/data (empty without write_minari)
  std::filesystem::path d4rl;     // <out>/<dataset_id>/d4rl.hdf5 (empty without write_d4rl)
  record::RecordSummary summary;  // returns, lengths, steps, videos
};

RecordResult record_dataset(const std::string& target, const RecordOptions& options);

}  // namespace recur::agent
