// `recur record TARGET | --random --env ID --episodes N --dataset-id NAME-vK ...`: runs a policy
// (or the random one) on one env and writes the episodes as a Minari dataset (and/or a D4RL
// file), optionally filming some of them as MP4. Every input is checked before anything is
// written; the dataset appears under its final name only when every episode is in it.
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>

#include "agent/record/minari_writer.h"
#include "agent/record/recorder.h"
#include "agent/training.h"
#include "core/error.h"
#include "tools/cli/commands.h"

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
                "Take the policy's most likely action (the default; not with --random)");
  cmd->add_flag("--stochastic", args->stochastic,
                "Sample actions from the policy (not with --random)");
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
    RECUR_CHECK(!a.random || !(a.deterministic || a.stochastic),
                "{} picks how a policy's actions are chosen; --random draws them uniformly from "
                "the action space: drop {}",
                a.deterministic ? "--deterministic" : "--stochastic",
                a.deterministic ? "--deterministic" : "--stochastic");
    RECUR_CHECK(a.format == "minari" || a.format == "d4rl" || a.format == "both",
                "--format '{}': it must be minari, d4rl or both", a.format);
    rec::check_dataset_id(a.dataset_id);
    const rec::VideoSchedule schedule = video_schedule(a.video);
    check_video_schedule(schedule, a.episodes);

    // The flags are checked above, so that messages name them; agent::record_dataset (the
    // library's `recur record`) records, and on failure removes whatever it created.
    agent::RecordOptions o;
    o.dataset_id = a.dataset_id;
    o.episodes = a.episodes;
    o.seed = a.seed;
    o.deterministic = !a.stochastic;
    o.record_state = a.record_state;
    o.env_id = a.env;
    o.env_options = parse_env_options(a.options);
    o.out = a.out;
    o.overwrite = a.overwrite;
    o.write_minari = a.format != "d4rl";
    o.write_d4rl = a.format != "minari";
    if (!a.random) o.device = resolve_cli_device(a.device);
    o.plugins = a.plugins;
    o.video_dir = a.video.dir;
    o.video = schedule;
    o.name_prefix = a.video.name_prefix;
    const agent::RecordResult result = agent::record_dataset(a.random ? "" : a.target, o);
    const rec::RecordSummary& s = result.summary;
    const std::string dataset = result.dataset.string(), d4rl = result.d4rl.string();
    if (a.json) {
      nlohmann::ordered_json j;
      j["dataset_id"] = a.dataset_id;
      j["dataset"] = dataset;
      j["d4rl"] = d4rl;
      j["env_id"] = result.env_id;
      j["episodes"] = s.returns.size();
      j["steps"] = s.steps;
      j["seed"] = a.seed;
      // What acted, as the dataset's metadata["recur_policy"] says: the random policy draws
      // every action from the action space, so it is never deterministic.
      j["policy"] = a.random ? "random" : "checkpoint";
      j["deterministic"] = !a.random && o.deterministic;
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
