// Writes recorded episodes as a Minari 0.5 dataset (HDF5 format), loadable with
// minari.load_dataset(id) or minari.MinariDataset("<root>/<id>/data"):
//
//   <root>/<id>/data/main_data.hdf5   episode_0 ... episode_{E-1} groups (layout below)
//   <root>/<id>/data/metadata.json    total_episodes, total_steps, data_format "hdf5",
//                                     observation_space, action_space (space JSON as strings),
//                                     env_spec (Gymnasium envs only), dataset_id, minari_version
//                                     "0.5.0" (loadable by every Minari 0.5.x), requirements, ...
//   <root>/<id>/d4rl.hdf5             with write_d4rl: the same transitions as one flat D4RL file
//                                     (a sibling of data/, so Minari never sees it)
//
// Episode group (N = steps; h5py's types; see agent/record/episode.h for the meaning of rows):
//   attrs      id, total_steps, seed (int64; uint64 above 2^63-1), rewards_sum, rewards_mean,
//              rewards_std (ddof 0), rewards_max, rewards_min (float64)
//   observations  (N+1, *obs_shape) float32 (int64 (N+1,) for a Discrete observation space)
//   actions       (N,) int64 for Discrete, (N, *action_shape) float32 for Box
//   rewards       (N,) float64
//   terminations, truncations  (N,) h5py bool (enum over int8, FALSE=0, TRUE=1)
//   infos/episode_start (N+1,) bool; infos/policy_state (N+1, state_dim) float32 when recorded
//
// D4RL file (M = sum of N over episodes; gzip): observations (M, *obs_shape) float32 (the N rows
// before each final observation), next_observations (M, *obs_shape) float32, actions (M,) int64
// or (M, *action_shape) float32, rewards (M,) float32, terminals (M,) bool, timeouts (M,) bool
// (truncated and not terminated).
//
// Streaming and atomicity: add() writes an episode to disk at once (episodes need not stay in
// memory) into a hidden sibling directory <root>/<parent of id>/.<name>.tmp.<pid>.<n>; commit()
// writes metadata.json and renames that directory to <root>/<id> (swapping it with the old one in
// one step when overwriting). A writer destroyed before commit() removes its directory, so a failed
// record never leaves a dataset that looks complete; the directory of a killed process is removed
// by the next writer of the same id (core/atomic_file.h: remove_stale_temps).
//
// Sizes: HDF5 reports a full disk ("No space left on device") when add() or commit() writes; the
// writer then removes its directory, as after any failure.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/record/episode.h"
#include "envs/space.h"

namespace recur::agent::record {

// $MINARI_DATASETS_PATH, else ~/.minari/datasets (minari/storage/datasets_root_dir.py).
std::string default_datasets_root();

// Minari's id grammar (namespace/)(env_name/)name-vN, e.g. "recur/cartpole/ppo-lstm-v0"; the
// version is required (Minari's loader does int(version)). Throws recur::Error explaining the
// grammar with an example.
void check_dataset_id(const std::string& id);

// Gymnasium's entry point for an id Gymnasium registers, e.g. "CartPole-v1" ->
// "gymnasium.envs.classic_control.cartpole:CartPoleEnv"; "" for recur's own envs
// (CartPoleNoVel-v1, RepeatPrevious*), whose env_spec is recur_env_spec_json's.
std::string gymnasium_entry_point(const std::string& env_id);

// The entry point the recur Python package registers recur/<id> with (tools/python/recur/envs.py:
// the env without its own time limit; gymnasium.make adds the TimeLimit of max_episode_steps).
inline constexpr const char* kRecurGymnasiumEntryPoint = "recur.envs:gymnasium_env";

struct DatasetInfo {
  std::string dataset_id;  // e.g. "recur/cartpole/ppo-lstm-v0"
  std::string env_id;      // e.g. "CartPole-v1"
  envs::Space observation_space, action_space;
  int max_episode_steps = 0;  // the time limit used; 0 = none
  std::optional<double> reward_threshold;
  // Gymnasium entry point when the env is a Gymnasium env (gymnasium_entry_point(env_id)), else
  // empty: env_spec is then omitted.
  std::string env_entry_point;
  // env_spec as Gymnasium wrote it (EnvSpec.to_json() of a Python env with a spec), written as
  // given; it takes precedence over env_entry_point.
  std::string env_spec_json;

  // Extra metadata; empty strings are left out of metadata.json (as Minari leaves out None).
  std::string algorithm_name;
  std::string description;
  std::string author;
  std::string code_permalink;
  std::string recur_policy_json;  // a JSON object, stored as metadata["recur_policy"]

  bool overwrite = false;    // replace an existing <root>/<id>
  bool write_minari = true;  // the Minari layout <root>/<id>/data/ (false: the D4RL file alone)
  bool write_d4rl = false;   // <root>/<id>/d4rl.hdf5 (at least one of the two)

  std::string author_email;  // written as a one-element list when given
};

// metadata.json's env_spec string (Gymnasium's EnvSpec.to_json(), byte for byte for the ids
// Gymnasium registers); info.env_spec_json when given; "" when that and info.env_entry_point
// are empty.
std::string minari_env_spec_json(const DatasetInfo& info);

// The env_spec of one of recur's built-in envs that Gymnasium does not register (e.g.
// CartPoleNoVel-v1, CartPole-v1 with the velocities masked): the recur Python package's
// registration "recur/<id>" (kRecurGymnasiumEntryPoint, kwargs env_id and the env options but
// max_episode_steps, which is the spec's), as EnvSpec.to_json() writes it. Minari's
// recover_environment() then rebuilds the env the dataset was recorded on, observation space
// included, wherever `import recur` works.
std::string recur_env_spec_json(const DatasetInfo& info,
                                const std::map<std::string, std::string>& env_options);

class MinariWriter {
 public:
  // Checks the id, refuses an existing <root>/<id> unless info.overwrite, creates the temporary
  // directory and the HDF5 file(s) in it. Throws recur::Error naming the path and the reason.
  MinariWriter(const std::string& root, DatasetInfo info);
  ~MinariWriter();
  MinariWriter(const MinariWriter&) = delete;
  MinariWriter& operator=(const MinariWriter&) = delete;

  // Writes group episode_<episodes()> now. Shapes must agree with the spaces and with each other,
  // flags be 0/1 and Discrete actions integers in [0, n) (std::invalid_argument otherwise); an
  // episode has at least one step. An empty episode_start is written as 1 at row 0, 0 elsewhere.
  void add(const Episode& episode);
  // Writes data/metadata.json, closes the files and moves the dataset into place (replacing an
  // old one when overwrite was given). Returns the final data directory, <root>/<id>/data, or ""
  // without the Minari layout (write_minari false).
  std::string commit();

  int episodes() const { return episodes_; }
  int64_t steps() const { return steps_; }
  // <root>/<id>
  const std::filesystem::path& dataset_dir() const { return final_dir_; }

 private:
  struct Files;
  // The two layouts of one checked episode; Discrete values already as int64 (else empty).
  void write_minari_episode(const Episode& episode, const std::vector<int64_t>& discrete_obs,
                            const std::vector<int64_t>& discrete_actions);
  void append_d4rl(const Episode& episode, const std::vector<int64_t>& discrete_actions);
  // data/metadata.json, and namespace_metadata.json files as Minari's create_namespace leaves.
  void write_metadata() const;

  DatasetInfo info_;
  std::filesystem::path root_;
  std::filesystem::path final_dir_;  // <root>/<id>
  std::filesystem::path temp_dir_;   // hidden sibling of final_dir_, renamed on commit
  std::unique_ptr<Files> files_;
  int episodes_ = 0;
  int64_t steps_ = 0;
  bool committed_ = false;
};

}  // namespace recur::agent::record
