// `recur eval RUN_DIR|CHECKPOINT`: headless evaluation of a trained policy. Each env's recurrent
// state is carried across steps and reset at episode starts. With --video DIR the scheduled
// episodes are also filmed by the Recorder (agent/record/recorder.h), alongside: the evaluation's
// returns are exactly those without --video.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <memory>

#include "agent/evaluator.h"
#include "agent/record/recorder.h"
#include "agent/train_job.h"
#include "core/error.h"
#include "policy/device_choice.h"
#include "policy/policy_checkpoint.h"
#include "tools/commands.h"

namespace recur::cli {

PolicyTarget load_policy_target(const std::string& target, const std::string& env_override,
                                const std::vector<std::string>& cli_plugins) {
  PolicyTarget t = agent::load_policy_target(target, env_override);
  load_target_plugins(t, cli_plugins);
  RECUR_CHECK(!t.env_id.empty(), "{} does not record its env; pass --env ID", t.path.string());
  return t;
}

policy::Device resolve_cli_device(const std::string& value) {
  std::string why;
  const policy::Device d = policy::resolve_device("--device", value, policy::query_devices(), &why);
  if (!why.empty()) spdlog::info("{}", why);
  return d;
}

void add_eval_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("eval", "Evaluate a trained policy headlessly");
  struct Args {
    std::string target;
    int episodes = 10;
    bool deterministic = false;
    std::string env;
    uint64_t seed = 12345;
    int num_envs = 4;
    bool json = false;
    std::string device = "cpu";
    VideoArgs video;
    std::vector<std::string> plugins;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("target", args->target,
                  "A run directory (its best, else latest checkpoint) or "
                  "a checkpoint file")
      ->required();
  cmd->add_option("--episodes", args->episodes, "Episodes")
      ->check(CLI::Range(1, 1 << 24))
      ->capture_default_str();
  cmd->add_flag("--deterministic", args->deterministic, "Take the most likely action");
  cmd->add_option("--env", args->env, "Env id (default: the one the policy was trained on)");
  add_plugin_option(cmd, args->plugins);
  cmd->add_option("--seed", args->seed, "Seed of the evaluation envs")->capture_default_str();
  cmd->add_option("--num-envs", args->num_envs, "Envs run in parallel")
      ->check(CLI::Range(1, 1 << 12))
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "Print one JSON object");
  cmd->add_option("--device", args->device,
                  "Where the policy's core runs: cpu, cuda or auto (any checkpoint loads on any "
                  "device)")
      ->capture_default_str();
  add_video_options(cmd, args->video,
                    "Also film episodes into DIR as MP4 (recorded alongside with the seeds "
                    "`recur record --seed S` uses: episode i resets with S + i; the returns "
                    "printed stay the evaluation's)");
  cmd->callback([args, &exit_code] {
    const agent::record::VideoSchedule schedule = video_schedule(args->video);
    const PolicyTarget target = load_policy_target(args->target, args->env, args->plugins);
    agent::EvalConfig cfg;
    cfg.env_id = target.env_id;
    cfg.env_options = target.env_options;
    cfg.episodes = args->episodes;
    cfg.num_envs = args->num_envs;
    cfg.seed = args->seed;
    cfg.deterministic = args->deterministic;
    cfg.placement.device = resolve_cli_device(args->device);
    const std::string path = target.path.string();
    // The filming recorder first: a video directory that cannot be written fails before the
    // evaluation runs.
    std::unique_ptr<agent::record::Recorder> recorder;
    if (!args->video.dir.empty()) {
      agent::record::RecordConfig rc;
      rc.env_id = cfg.env_id;
      rc.env_options = cfg.env_options;
      rc.episodes = args->episodes;
      rc.seed = args->seed;
      rc.deterministic = args->deterministic;
      rc.placement = cfg.placement;
      rc.policy_name = path;
      rc.video_dir = args->video.dir;
      rc.video = schedule;
      rc.name_prefix = args->video.name_prefix;
      recorder = std::make_unique<agent::record::Recorder>(rc, target.checkpoint.spec,
                                                           target.checkpoint.tensors);
      check_video_schedule(schedule, args->episodes);
      prepare_output_dir(args->video.dir, "--video");
    }
    const auto r = agent::evaluate_policy(target.checkpoint.spec, target.checkpoint.tensors, cfg);
    std::vector<std::string> videos;
    if (recorder) {
      try {
        for (int i = 0; i < args->episodes; ++i) {
          if (!schedule.films(i)) continue;
          videos.push_back(recorder->video_path(i));
          recorder->record_episode(i, videos.back());
        }
      } catch (...) {
        for (const auto& v : videos) std::filesystem::remove(v);
        throw;
      }
    }
    if (args->json) {
      std::string video_json;
      if (recorder) {
        std::vector<std::string> quoted;
        for (const auto& v : videos) quoted.push_back(fmt::format("\"{}\"", v));
        video_json = fmt::format(", \"videos\": [{}]", fmt::join(quoted, ", "));
      }
      fmt::print(
          "{{\"checkpoint\": \"{}\", \"env_id\": \"{}\", \"episodes\": {}, "
          "\"deterministic\": {}, \"return_mean\": {}, \"return_std\": {}, "
          "\"length_mean\": {}{}}}\n",
          path, cfg.env_id, r.returns.size(), args->deterministic, r.mean_return(), r.std_return(),
          r.mean_length(), video_json);
    } else {
      fmt::print("{} on {} ({} episodes, {}): return {:.2f} +- {:.2f}, length {:.1f}{}\n", path,
                 cfg.env_id, r.returns.size(), args->deterministic ? "deterministic" : "stochastic",
                 r.mean_return(), r.std_return(), r.mean_length(),
                 recorder ? fmt::format("; videos {} in {}", videos.size(), args->video.dir)
                          : std::string());
    }
    exit_code = 0;
  });
}

}  // namespace recur::cli
