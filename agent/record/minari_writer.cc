#include "agent/record/minari_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <system_error>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "agent/record/hdf5.h"
#include "agent/record/space_json.h"
#include "core/atomic_file.h"
#include "core/error.h"

namespace recur::agent::record {
namespace fs = std::filesystem;

namespace {

// The version of Minari's on-disk format recur writes: the oldest 0.5 release, whose loader
// checks only what recur writes, so that every Minari 0.5.x loads the dataset.
constexpr const char* kMinariVersion = "0.5.0";
constexpr const char* kMainFile = "main_data.hdf5";
constexpr const char* kD4rlFile = "d4rl.hdf5";

std::string errno_text(const std::error_code& ec) {
  return ec.message();
}

// fsync of a directory: its entries (files created in it, a rename into it) on disk. File
// systems that cannot sync a directory (EINVAL) are accepted, as core/atomic_file.cc does.
void sync_directory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  const bool synced = fd >= 0 && (::fsync(fd) == 0 || errno == EINVAL);
  const int err = errno;
  if (fd >= 0) ::close(fd);
  if (!synced)
    throw Error(fmt::format("cannot sync the directory {}: {}", dir.string(), std::strerror(err)));
}

// A Discrete value travels as a float holding an integer (envs/space.h); Minari stores int64.
std::vector<int64_t> discrete_values(std::span<const float> values, int64_t n, const char* what,
                                     int episode) {
  std::vector<int64_t> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const float v = values[i];
    RECUR_CHECK_ARG(std::isfinite(v) && v == std::floor(v) && v >= 0 && v < static_cast<float>(n),
                    "episode {}: {}[{}] = {} is not a Discrete({}) value", episode, what, i, v, n);
    out[i] = static_cast<int64_t>(v);
  }
  return out;
}

void check_flags(const std::vector<uint8_t>& flags, const char* what, int episode) {
  for (size_t i = 0; i < flags.size(); ++i)
    RECUR_CHECK_ARG(flags[i] <= 1, "episode {}: {}[{}] = {} is not 0 or 1", episode, what, i,
                    flags[i]);
}

// (rows, *space shape); a Discrete space contributes no dimension.
std::vector<int64_t> rows_shape(int64_t rows, const envs::Space& space) {
  std::vector<int64_t> shape = {rows};
  if (!space.is_discrete())
    for (int d : space.shape()) shape.push_back(d);
  return shape;
}

void check_space(const envs::Space& space, const char* what) {
  RECUR_CHECK_ARG(!space.is_discrete() || space.n() > 0, "DatasetInfo.{} is not set (Discrete(0))",
                  what);
}

}  // namespace

// ---- MinariWriter ------------------------------------------------------------------------------

struct MinariWriter::Files {
  std::optional<H5File> main;
  std::optional<H5File> d4rl;
  // D4RL datasets, appended to per episode.
  std::optional<H5Dataset> observations, next_observations, actions, rewards, terminals, timeouts;

  void close() {
    observations.reset();
    next_observations.reset();
    actions.reset();
    rewards.reset();
    terminals.reset();
    timeouts.reset();
    if (main) main->close();
    if (d4rl) d4rl->close();
  }
};

MinariWriter::MinariWriter(const std::string& root, DatasetInfo info) : info_(std::move(info)) {
  check_dataset_id(info_.dataset_id);
  check_space(info_.observation_space, "observation_space");
  check_space(info_.action_space, "action_space");
  RECUR_CHECK_ARG(info_.write_minari || info_.write_d4rl,
                  "dataset {}: DatasetInfo asks for neither the Minari layout nor the D4RL file",
                  info_.dataset_id);
  RECUR_CHECK(!root.empty(), "the Minari datasets root directory is empty");
  RECUR_CHECK(info_.recur_policy_json.empty() || nlohmann::json::accept(info_.recur_policy_json),
              "dataset {}: the recur_policy metadata is not valid JSON", info_.dataset_id);
  root_ = fs::path(root);
  final_dir_ = root_ / info_.dataset_id;

  std::error_code ec;
  if (fs::exists(final_dir_, ec) && !info_.overwrite)
    throw Error(fmt::format(
        "dataset {} already exists at {}; pass --overwrite to replace it, or record under a new "
        "version (-vN)",
        info_.dataset_id, final_dir_.string()));
  const fs::path parent = final_dir_.parent_path();
  fs::create_directories(parent, ec);
  if (ec)
    throw Error(fmt::format("cannot create the dataset directory {} for {}: {}", parent.string(),
                            info_.dataset_id, errno_text(ec)));

  // A fresh hidden sibling: Minari's listings skip dot-directories, and rename() into place
  // stays on one file system. Those a killed recording of this id left go first.
  remove_stale_temps(parent, final_dir_.filename().string());
  static std::atomic<uint64_t> counter{0};
  for (;;) {
    temp_dir_ = parent /
                fmt::format(".{}.tmp.{}.{}", final_dir_.filename().string(), ::getpid(), counter++);
    if (fs::create_directory(temp_dir_, ec)) break;
    if (ec)
      throw Error(fmt::format("cannot create a directory in {} for dataset {}: {}", parent.string(),
                              info_.dataset_id, errno_text(ec)));
  }
  try {
    files_ = std::make_unique<Files>();
    if (info_.write_minari) {
      fs::create_directory(temp_dir_ / "data");
      // Minari opens main_data.hdf5 with track_order=True.
      files_->main = H5File::create(temp_dir_ / "data" / kMainFile, /*track_order=*/true);
    }
    if (info_.write_d4rl) {
      files_->d4rl = H5File::create(temp_dir_ / kD4rlFile);
      const H5DatasetOptions gzip{.chunk_rows = 0, .gzip = 4};
      const H5Type action_type =
          info_.action_space.is_discrete() ? H5Type::kInt64 : H5Type::kFloat32;
      const auto obs_shape = rows_shape(0, info_.observation_space);
      files_->observations =
          files_->d4rl->create_dataset("observations", H5Type::kFloat32, obs_shape, gzip);
      files_->next_observations =
          files_->d4rl->create_dataset("next_observations", H5Type::kFloat32, obs_shape, gzip);
      files_->actions = files_->d4rl->create_dataset("actions", action_type,
                                                     rows_shape(0, info_.action_space), gzip);
      files_->rewards = files_->d4rl->create_dataset("rewards", H5Type::kFloat32, {0}, gzip);
      files_->terminals = files_->d4rl->create_dataset("terminals", H5Type::kBool, {0}, gzip);
      files_->timeouts = files_->d4rl->create_dataset("timeouts", H5Type::kBool, {0}, gzip);
    }
  } catch (...) {
    files_.reset();
    fs::remove_all(temp_dir_, ec);
    throw;
  }
}

MinariWriter::~MinariWriter() {
  if (committed_) return;
  files_.reset();  // handles close themselves; nothing here throws
  std::error_code ec;
  fs::remove_all(temp_dir_, ec);
}

void MinariWriter::add(const Episode& ep) {
  RECUR_CHECK_ARG(files_ && !committed_, "MinariWriter::add after commit() (dataset {})",
                  info_.dataset_id);
  const int i = episodes_;
  const int64_t n = ep.steps();
  const auto N = static_cast<size_t>(n);
  const envs::Space& os = info_.observation_space;
  const envs::Space& as = info_.action_space;
  RECUR_CHECK_ARG(n >= 1, "episode {}: an episode has at least one step", i);
  RECUR_CHECK_ARG(ep.obs_dim == os.flat_size(),
                  "episode {}: obs_dim {} does not match the observation space {} ({} values)", i,
                  ep.obs_dim, os.to_string(), os.flat_size());
  RECUR_CHECK_ARG(ep.action_dim == as.flat_size(),
                  "episode {}: action_dim {} does not match the action space {} ({} values)", i,
                  ep.action_dim, as.to_string(), as.flat_size());
  RECUR_CHECK_ARG(ep.state_dim >= 0, "episode {}: state_dim {} < 0", i, ep.state_dim);
  const auto obs_dim = static_cast<size_t>(ep.obs_dim);
  const auto act_dim = static_cast<size_t>(ep.action_dim);
  const auto state_dim = static_cast<size_t>(ep.state_dim);
  auto check_size = [&](size_t got, size_t want, const char* what, const char* shape) {
    RECUR_CHECK_ARG(got == want, "episode {} ({} steps): {} holds {} values, {} = {} expected", i,
                    n, what, got, shape, want);
  };
  check_size(ep.observations.size(), (N + 1) * obs_dim, "observations", "(N+1)*obs_dim");
  check_size(ep.actions.size(), N * act_dim, "actions", "N*action_dim");
  check_size(ep.terminations.size(), N, "terminations", "N");
  check_size(ep.truncations.size(), N, "truncations", "N");
  if (!ep.episode_start.empty()) check_size(ep.episode_start.size(), N + 1, "episode_start", "N+1");
  check_size(ep.policy_state.size(), (N + 1) * state_dim, "policy_state", "(N+1)*state_dim");
  check_flags(ep.terminations, "terminations", i);
  check_flags(ep.truncations, "truncations", i);
  check_flags(ep.episode_start, "episode_start", i);
  std::vector<int64_t> discrete_obs, discrete_actions;
  if (os.is_discrete()) discrete_obs = discrete_values(ep.observations, os.n(), "observations", i);
  if (as.is_discrete()) discrete_actions = discrete_values(ep.actions, as.n(), "actions", i);

  if (files_->main) write_minari_episode(ep, discrete_obs, discrete_actions);
  if (files_->d4rl) append_d4rl(ep, discrete_actions);
  ++episodes_;
  steps_ += n;
}

void MinariWriter::write_minari_episode(const Episode& ep, const std::vector<int64_t>& discrete_obs,
                                        const std::vector<int64_t>& discrete_actions) {
  const int i = episodes_;
  const int64_t n = ep.steps();
  const auto N = static_cast<size_t>(n);
  const envs::Space& os = info_.observation_space;
  const envs::Space& as = info_.action_space;
  H5Group g = files_->main->create_group(fmt::format("episode_{}", i));
  // Attributes as Minari's update_episodes and EpisodeMetadataCallback write them.
  g.set_attr_int("id", i);
  if (ep.seed <= static_cast<uint64_t>(INT64_MAX))
    g.set_attr_int("seed", static_cast<int64_t>(ep.seed));
  else
    g.set_attr_uint("seed", ep.seed);
  g.set_attr_int("total_steps", n);
  double sum = 0, lo = ep.rewards[0], hi = ep.rewards[0];
  for (double r : ep.rewards) {
    sum += r;
    lo = std::min(lo, r);
    hi = std::max(hi, r);
  }
  const double mean = sum / static_cast<double>(n);
  double var = 0;
  for (double r : ep.rewards) var += (r - mean) * (r - mean);
  g.set_attr_double("rewards_sum", sum);
  g.set_attr_double("rewards_mean", mean);
  g.set_attr_double("rewards_std", std::sqrt(var / static_cast<double>(n)));  // numpy ddof=0
  g.set_attr_double("rewards_max", hi);
  g.set_attr_double("rewards_min", lo);

  if (os.is_discrete())
    g.create_dataset("observations", H5Type::kInt64, rows_shape(n + 1, os))
        .write<int64_t>(discrete_obs);
  else
    g.create_dataset("observations", H5Type::kFloat32, rows_shape(n + 1, os))
        .write<float>(ep.observations);
  if (as.is_discrete())
    g.create_dataset("actions", H5Type::kInt64, rows_shape(n, as)).write<int64_t>(discrete_actions);
  else
    g.create_dataset("actions", H5Type::kFloat32, rows_shape(n, as)).write<float>(ep.actions);
  g.create_dataset("rewards", H5Type::kFloat64, {n}).write<double>(ep.rewards);
  g.create_dataset("terminations", H5Type::kBool, {n}).write<uint8_t>(ep.terminations);
  g.create_dataset("truncations", H5Type::kBool, {n}).write<uint8_t>(ep.truncations);
  H5Group infos = g.create_group("infos");
  std::vector<uint8_t> starts = ep.episode_start;
  if (starts.empty()) {
    starts.assign(N + 1, 0);
    starts[0] = 1;
  }
  infos.create_dataset("episode_start", H5Type::kBool, {n + 1}).write<uint8_t>(starts);
  if (ep.state_dim > 0)
    infos.create_dataset("policy_state", H5Type::kFloat32, {n + 1, ep.state_dim})
        .write<float>(ep.policy_state);
}

void MinariWriter::append_d4rl(const Episode& ep, const std::vector<int64_t>& discrete_actions) {
  const auto N = static_cast<size_t>(ep.steps());
  const auto obs_dim = static_cast<size_t>(ep.obs_dim);
  const envs::Space& as = info_.action_space;
  const std::span<const float> obs(ep.observations);
  files_->observations->append<float>(obs.first(N * obs_dim));
  files_->next_observations->append<float>(obs.subspan(obs_dim, N * obs_dim));
  if (as.is_discrete())
    files_->actions->append<int64_t>(discrete_actions);
  else
    files_->actions->append<float>(ep.actions);
  const std::vector<float> rewards(ep.rewards.begin(), ep.rewards.end());
  files_->rewards->append<float>(rewards);
  files_->terminals->append<uint8_t>(ep.terminations);
  std::vector<uint8_t> timeouts(N);
  for (size_t t = 0; t < N; ++t) timeouts[t] = ep.truncations[t] && !ep.terminations[t];
  files_->timeouts->append<uint8_t>(timeouts);
}

namespace {
std::string string_list(const std::string& item) {
  // fmt, not "[" + s + "]": GCC 12's -Wrestrict misfires on that concatenation at -O2.
  return item.empty() ? std::string("[]") : fmt::format("[{}]", python_json_string(item));
}
}  // namespace

void MinariWriter::write_metadata() const {
  // metadata.json, keys in the order Minari writes them (MinariStorage.new, then
  // update_metadata with _generate_dataset_metadata's keys, then dataset_size).
  const std::string env_spec = minari_env_spec_json(info_);
  std::string m = "{";
  auto key = [&](const char* name, const std::string& json_value) {
    if (m.size() > 1) m += ", ";
    m += fmt::format("\"{}\": {}", name, json_value);
  };
  key("total_episodes", std::to_string(episodes_));
  key("total_steps", std::to_string(steps_));
  key("data_format", "\"hdf5\"");
  key("observation_space", python_json_string(space_to_minari_json(info_.observation_space)));
  key("action_space", python_json_string(space_to_minari_json(info_.action_space)));
  if (!env_spec.empty()) key("env_spec", python_json_string(env_spec));
  key("dataset_id", python_json_string(info_.dataset_id));
  if (!info_.code_permalink.empty())
    key("code_permalink", python_json_string(info_.code_permalink));
  if (!info_.author.empty()) key("author", string_list(info_.author));
  if (!info_.author_email.empty()) key("author_email", string_list(info_.author_email));
  if (!info_.algorithm_name.empty())
    key("algorithm_name", python_json_string(info_.algorithm_name));
  if (!info_.description.empty()) key("description", python_json_string(info_.description));
  key("minari_version", python_json_string(kMinariVersion));
  key("requirements", "[\"gymnasium>=1.0\"]");
  // Minari's get_size(): every file under data/, in MB (10^6 bytes), rounded to 0.1.
  std::error_code ec;
  const auto h5_bytes = fs::file_size(temp_dir_ / "data" / kMainFile, ec);
  const double mb =
      (static_cast<double>(ec ? 0 : h5_bytes) + static_cast<double>(m.size()) + 32) / 1e6;
  key("dataset_size", python_float_repr(std::round(mb * 10) / 10));
  if (!info_.recur_policy_json.empty())
    key("recur_policy", nlohmann::json::parse(info_.recur_policy_json).dump());
  m += "}";
  write_file_atomic(temp_dir_ / "data" / "metadata.json", m);

  // Namespaces as Minari's create_namespace leaves them: namespace_metadata.json ("{}" unless
  // one exists) in every directory between the root and the dataset.
  const std::string& id = info_.dataset_id;
  for (size_t slash = id.find('/'); slash != std::string::npos; slash = id.find('/', slash + 1)) {
    const fs::path file = root_ / id.substr(0, slash) / "namespace_metadata.json";
    if (!fs::exists(file, ec)) write_file_atomic(file, "{}");
  }
}

std::string MinariWriter::commit() {
  RECUR_CHECK(files_ && !committed_, "dataset {}: commit() called twice", info_.dataset_id);
  files_->close();  // flushed and fsynced (H5File::close)
  files_.reset();

  if (info_.write_minari) write_metadata();  // write_file_atomic: fsynced, data/ too
  // The directory entries of the files, before the rename publishes them.
  if (info_.write_minari) sync_directory(temp_dir_ / "data");
  sync_directory(temp_dir_);

  std::error_code ec;
  // Move into place. An old dataset (overwrite) is swapped with the new one in one step
  // (renameat2 RENAME_EXCHANGE), or where the file system cannot, first renamed aside, so that
  // <root>/<id> is at every moment either the old complete dataset or the new one. A process
  // killed before the old one is removed leaves it under a temp name, which the next writer of
  // this id removes (or renames back, if the new one never arrived).
  const fs::path parent = final_dir_.parent_path();
  fs::path old;
  if (fs::exists(final_dir_, ec)) {
    RECUR_CHECK(info_.overwrite,
                "dataset {} appeared at {} while recording; pass --overwrite to replace it",
                info_.dataset_id, final_dir_.string());
    if (::renameat2(AT_FDCWD, temp_dir_.c_str(), AT_FDCWD, final_dir_.c_str(), RENAME_EXCHANGE) ==
        0) {
      committed_ = true;
      sync_directory(parent);         // the swap, on disk
      fs::remove_all(temp_dir_, ec);  // now the old dataset
      return info_.write_minari ? (final_dir_ / "data").string() : std::string();
    }
    static std::atomic<uint64_t> counter{0};
    old = parent /
          fmt::format(".{}.old.{}.{}", final_dir_.filename().string(), ::getpid(), counter++);
    fs::rename(final_dir_, old, ec);
    if (ec)
      throw Error(fmt::format("cannot move the old dataset {} aside: {}", final_dir_.string(),
                              errno_text(ec)));
  }
  fs::rename(temp_dir_, final_dir_, ec);
  if (ec) {
    const std::string reason = errno_text(ec);
    if (!old.empty()) fs::rename(old, final_dir_, ec);  // put the old dataset back
    throw Error(fmt::format("cannot move dataset {} into place at {}: {}", info_.dataset_id,
                            final_dir_.string(), reason));
  }
  committed_ = true;
  sync_directory(parent);  // the rename, on disk (as write_file_atomic does for small files)
  if (!old.empty()) fs::remove_all(old, ec);
  return info_.write_minari ? (final_dir_ / "data").string() : std::string();
}

}  // namespace recur::agent::record
