// `recur record TARGET | --random --env ID --episodes N --dataset-id NAME-vK ...`: runs a policy
// (or the random one) on one env and writes the episodes as a Minari dataset (and/or a D4RL
// file), optionally filming some of them as MP4. Every input is checked before anything is
// written; the dataset appears under its final name only when every episode is in it.
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <system_error>

#include "agent/record/background_sink.h"
#include "agent/record/minari_writer.h"
#include "agent/record/recorder.h"
#include "core/error.h"
#include "envs/registry.h"
#include "tools/commands.h"

namespace recur::cli {

void add_video_options(CLI::App* cmd, VideoArgs& args, const std::string& video_help) {
  cmd->add_option("--video", args.dir, video_help);
  cmd->add_option("--video-episodes", args.episodes,
                  "Episodes to film, e.g. 0,3 (default with --video: 0, 1, 8, 27, ..., 729, then "
                  "every 1000th, as Gymnasium's RecordVideo)");
  cmd->add_option("--video-every", args.every, "Film episodes 0, K, 2K, ...");
  cmd->add_option("--name-prefix", args.name_prefix, "Video file names: PREFIX-episode-<i>.mp4")
      ->capture_default_str();
}

agent::record::VideoSchedule video_schedule(const VideoArgs& args) {
  using agent::record::VideoSchedule;
  const bool list = !args.episodes.empty(), every = args.every != 0;
  RECUR_CHECK(!list || !every,
              "--video-episodes and --video-every both pick the episodes to film; give one");
  if (args.dir.empty()) {
    RECUR_CHECK(!list && !every, "{} picks episodes to film, but there is no --video DIR",
                list ? "--video-episodes" : "--video-every");
    return {};
  }
  RECUR_CHECK(!args.name_prefix.empty() && args.name_prefix.find('/') == std::string::npos,
              "--name-prefix '{}' must be a non-empty file name prefix without '/'",
              args.name_prefix);
  if (list) return VideoSchedule::list(args.episodes);
  if (every) return VideoSchedule::every_k(args.every);
  return VideoSchedule::capped_cubic();
}

void check_video_schedule(const agent::record::VideoSchedule& schedule, int episodes) {
  for (const int e : schedule.episodes)
    RECUR_CHECK(e < episodes,
                "--video-episodes: episode {} is not recorded: there are {} episodes (0..{})", e,
                episodes, episodes - 1);
}

void prepare_output_dir(const std::filesystem::path& dir, const std::string& flag) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  RECUR_CHECK(!ec && fs::is_directory(dir), "{} {}: cannot create the directory: {}", flag,
              dir.string(), ec ? ec.message() : "a file of that name exists");
  const fs::path probe = dir / ".recur-write-check";
  bool writable = false;
  {
    std::ofstream out(probe);
    writable = static_cast<bool>(out << "x");
  }
  fs::remove(probe, ec);
  RECUR_CHECK(writable, "{} {}: the directory is not writable", flag, dir.string());
}

namespace {

// The outermost directory that creating `path` would add ("" when `path` exists).
std::filesystem::path first_missing(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::path missing;
  for (std::filesystem::path p = std::filesystem::absolute(path, ec);
       !p.empty() && !std::filesystem::exists(p, ec); p = p.parent_path()) {
    missing = p;
    if (p == p.parent_path()) break;
  }
  return missing;
}

// Removes `dir` when it holds directories only (what a failed command created and left empty).
void remove_if_only_directories(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (dir.empty() || !fs::is_directory(dir, ec)) return;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec))
    if (!it->is_directory(ec)) return;
  if (!ec) fs::remove_all(dir, ec);
}

}  // namespace

void add_record_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "record", "Record episodes of a policy as a Minari dataset (and MP4 videos)");
  struct Args {
    std::string target;
    bool random = false;
    std::string env;
    std::vector<std::string> options;
    int episodes = 0;
    uint64_t seed = 0;
    bool deterministic = false, stochastic = false;
    std::string dataset_id;
    std::string out;
    bool overwrite = false;
    std::string format = "minari";
    bool record_state = false;
    VideoArgs video;
    std::string device = "cpu";
    bool json = false;
    std::vector<std::string> plugins;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("target", args->target,
                  "A run directory (its best, else latest checkpoint) or a checkpoint file");
  cmd->add_flag("--random", args->random,
                "Record the uniformly random policy instead (needs --env)");
  cmd->add_option("--env", args->env,
                  "Env id (default: the one the policy was trained on; required with --random)");
  cmd->add_option("-o,--option", args->options,
                  "Env option key=value (repeatable; on top of the checkpoint's)");
  add_plugin_option(cmd, args->plugins);
  cmd->add_option("--episodes", args->episodes, "Episodes to record (>= 1)")->required();
  cmd->add_option("--seed", args->seed,
                  "Episode i resets its env with SEED + i (and draws its actions from a stream "
                  "of that seed), so every episode replays alone")
      ->capture_default_str();
  cmd->add_flag("--deterministic", args->deterministic,
                "Take the most likely action (the default)");
  cmd->add_flag("--stochastic", args->stochastic, "Sample actions from the policy");
  cmd->add_option("--dataset-id", args->dataset_id,
                  "Minari dataset id, (namespace/)name-vN, e.g. recur/cartpole/ppo-lstm-v0")
      ->required();
  cmd->add_option("--out", args->out,
                  "Datasets root (default: $MINARI_DATASETS_PATH, else ~/.minari/datasets); the "
                  "dataset goes to OUT/<dataset-id>/data/");
  cmd->add_flag("--overwrite", args->overwrite, "Replace an existing dataset of that id");
  cmd->add_option("--format", args->format,
                  "minari (Minari 0.5 HDF5), d4rl (one flat D4RL HDF5 file) or both")
      ->capture_default_str();
  cmd->add_flag("--record-state", args->record_state,
                "Store the recurrent state fed to the policy at every observation "
                "(infos/policy_state)");
  add_video_options(cmd, args->video, "Film episodes into DIR as MP4 (H.264)");
  cmd->add_option("--device", args->device, "Where the policy's core runs: cpu, cuda or auto")
      ->capture_default_str();
  cmd->add_flag("--json", args->json,
                "Print one JSON object (per-episode returns and lengths, files) instead of the "
                "summary line");
  cmd->callback([args, &exit_code] {
    namespace rec = agent::record;
    const Args& a = *args;
    // Every check before anything is written.
    RECUR_CHECK(a.episodes >= 1, "--episodes {}: record at least 1 episode", a.episodes);
    RECUR_CHECK(!a.random || a.target.empty(), "give a TARGET or --random, not both");
    RECUR_CHECK(a.random || !a.target.empty(),
                "record needs a TARGET (a run directory or a checkpoint file) or --random --env "
                "ID");
    RECUR_CHECK(!a.random || !a.env.empty(),
                "--random needs --env ID: the random policy has no env of its own (`recur envs` "
                "lists them)");
    RECUR_CHECK(!(a.deterministic && a.stochastic),
                "give --deterministic or --stochastic, not both");
    RECUR_CHECK(a.format == "minari" || a.format == "d4rl" || a.format == "both",
                "--format '{}': it must be minari, d4rl or both", a.format);
    rec::check_dataset_id(a.dataset_id);
    const rec::VideoSchedule schedule = video_schedule(a.video);
    check_video_schedule(schedule, a.episodes);

    rec::RecordConfig rc;
    rc.episodes = a.episodes;
    rc.seed = a.seed;
    rc.deterministic = !a.stochastic;
    rc.record_state = a.record_state;
    rc.video_dir = a.video.dir;
    rc.video = schedule;
    rc.name_prefix = a.video.name_prefix;
    std::unique_ptr<rec::Recorder> recorder;
    if (a.random) {
      load_cli_plugins(a.plugins);
      rc.env_id = a.env;
      rc.env_options = parse_env_options(a.options);
      rc.policy_name = "the random policy";
      recorder = std::make_unique<rec::Recorder>(rc);
    } else {
      const PolicyTarget target = load_policy_target(a.target, a.env, a.plugins);
      rc.env_id = target.env_id;
      rc.env_options = target.env_options;
      for (const auto& [k, v] : parse_env_options(a.options).values) rc.env_options.set(k, v);
      rc.placement.device = resolve_cli_device(a.device);
      rc.policy_name = target.path.string();
      recorder =
          std::make_unique<rec::Recorder>(rc, target.checkpoint.spec, target.checkpoint.tensors);
    }
    const envs::Env& env = recorder->env();
    const envs::EnvSpec& env_spec = envs::registry().at(env.id());

    rec::DatasetInfo info;
    info.dataset_id = a.dataset_id;
    info.env_id = env.id();
    info.observation_space = env.observation_space();
    info.action_space = env.action_space();
    info.max_episode_steps = env.max_episode_steps();
    info.reward_threshold = env_spec.reward_threshold;
    info.env_entry_point = rec::gymnasium_entry_point(env.id());
    info.algorithm_name = recorder->algorithm_name();
    info.description = fmt::format(
        "{} episodes of {} on {} recorded by `recur record` ({}, seed {})", a.episodes,
        rc.policy_name, env.id(),
        a.random ? "uniform actions" : (rc.deterministic ? "deterministic" : "stochastic"), a.seed);
    info.author = "recur";  // code_permalink stays empty (omitted): recur has no public URL yet
    info.recur_policy_json = recorder->policy_json();
    info.overwrite = a.overwrite;
    info.write_minari = a.format != "d4rl";
    info.write_d4rl = a.format != "minari";
    const std::string root = a.out.empty() ? rec::default_datasets_root() : a.out;
    // From here on files appear: on any failure, what this command created goes again (the
    // writer removes its temporary dataset, the recorder its videos, this the directories).
    namespace fs = std::filesystem;
    const fs::path made_root = first_missing(fs::path(root) / a.dataset_id);
    const fs::path made_video = a.video.dir.empty() ? fs::path() : first_missing(a.video.dir);
    std::unique_ptr<rec::MinariWriter> writer;
    rec::RecordSummary s;
    std::string dataset, d4rl;
    try {
      if (!a.video.dir.empty()) prepare_output_dir(a.video.dir, "--video");
      writer = std::make_unique<rec::MinariWriter>(root, info);  // refuses an existing id
      {
        // HDF5 writes on their own thread, overlapping the next episode's recording.
        rec::BackgroundSink sink([&](const rec::Episode& e) { writer->add(e); });
        s = recorder->run([&](const rec::Episode& e) { sink.push(e); });
        sink.finish();
      }
      dataset = writer->commit();
    } catch (...) {
      std::error_code ec;
      for (const auto& v : s.videos) fs::remove(v, ec);
      writer.reset();
      remove_if_only_directories(made_root);
      remove_if_only_directories(made_video);
      throw;
    }
    if (a.format != "minari") d4rl = (writer->dataset_dir() / "d4rl.hdf5").string();
    if (a.json) {
      nlohmann::ordered_json j;
      j["dataset_id"] = a.dataset_id;
      j["dataset"] = dataset;
      j["d4rl"] = d4rl;
      j["env_id"] = env.id();
      j["episodes"] = s.returns.size();
      j["steps"] = s.steps;
      j["seed"] = a.seed;
      j["deterministic"] = rc.deterministic;
      j["return_mean"] = s.mean_return();
      j["return_std"] = s.std_return();
      j["returns"] = s.returns;  // doubles print so that they read back exactly
      j["lengths"] = s.lengths;
      j["videos"] = s.videos;
      fmt::print("{}\n", j.dump());
    } else {
      const std::string files = a.format == "minari" ? dataset
                                : a.format == "d4rl" ? d4rl
                                                     : dataset + " and " + d4rl;
      fmt::print("recorded {} episodes ({} steps): return {:.2f} +- {:.2f}; dataset {}{}\n",
                 s.returns.size(), s.steps, s.mean_return(), s.std_return(), files,
                 a.video.dir.empty()
                     ? std::string()
                     : fmt::format("; videos {} in {}", s.videos.size(), a.video.dir));
    }
    exit_code = 0;
  });
}

}  // namespace recur::cli
