// `recur eval RUN_DIR|CHECKPOINT`: headless evaluation of a trained policy, through
// agent::evaluate (agent/training.h). Each env's recurrent state is carried across steps and reset
// at episode starts. With --video DIR the scheduled episodes are also filmed, alongside: the
// evaluation's returns are exactly those without --video.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <memory>

#include "agent/training.h"
#include "core/error.h"
#include "policy/device_choice.h"
#include "tools/cli/commands.h"

namespace recur::cli {

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
    int threads = 1;
    bool json = false;
    std::string device = "cpu";
    VideoArgs video;
    std::vector<std::string> plugins;
    std::vector<std::string> options;
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
  cmd->add_option("-o,--option", args->options,
                  "Env option key=value (repeatable; on top of the checkpoint's), e.g. "
                  "enable_wind=true for a LunarLander policy trained without wind");
  add_plugin_option(cmd, args->plugins);
  cmd->add_option("--seed", args->seed, "Seed of the evaluation envs")->capture_default_str();
  cmd->add_option("--num-envs", args->num_envs, "Envs run in parallel")
      ->check(CLI::Range(1, 1 << 12))
      ->capture_default_str();
  cmd->add_option("--threads", args->threads,
                  "Threads stepping the envs (at most --num-envs; the results are the same for "
                  "any count)")
      ->check(CLI::Range(1, 256))
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
    // The flags are checked here, so that messages name them; agent::evaluate (the library's
    // `recur eval`) does the rest.
    agent::EvaluateOptions o;
    o.video = video_schedule(args->video);
    if (!args->video.dir.empty()) check_video_schedule(o.video, args->episodes);
    o.episodes = args->episodes;
    o.deterministic = args->deterministic;
    o.env_id = args->env;
    o.seed = args->seed;
    o.num_envs = args->num_envs;
    o.threads = args->threads;
    o.env_options = parse_env_options(args->options);
    o.device = resolve_cli_device(args->device);
    o.plugins = args->plugins;
    o.video_dir = args->video.dir;
    o.name_prefix = args->video.name_prefix;
    const agent::EvaluateResult result = agent::evaluate(args->target, o);
    const agent::EvalResult& r = result.eval;
    const std::vector<std::string>& videos = result.videos;
    const std::string path = result.checkpoint.string();
    if (args->json) {
      std::string video_json;
      if (!args->video.dir.empty()) {
        std::vector<std::string> quoted;
        for (const auto& v : videos) quoted.push_back(fmt::format("\"{}\"", v));
        video_json = fmt::format(", \"videos\": [{}]", fmt::join(quoted, ", "));
      }
      fmt::print(
          "{{\"checkpoint\": \"{}\", \"env_id\": \"{}\", \"episodes\": {}, "
          "\"deterministic\": {}, \"return_mean\": {}, \"return_std\": {}, "
          "\"length_mean\": {}{}}}\n",
          path, result.env_id, r.returns.size(), args->deterministic, r.mean_return(),
          r.std_return(), r.mean_length(), video_json);
    } else {
      fmt::print("{} on {} ({} episodes, {}): return {:.2f} +- {:.2f}, length {:.1f}{}\n", path,
                 result.env_id, r.returns.size(),
                 args->deterministic ? "deterministic" : "stochastic", r.mean_return(),
                 r.std_return(), r.mean_length(),
                 !args->video.dir.empty()
                     ? fmt::format("; videos {} in {}", videos.size(), args->video.dir)
                     : std::string());
    }
    exit_code = 0;
  });
}

}  // namespace recur::cli
