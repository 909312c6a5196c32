// `recur eval RUN_DIR|CHECKPOINT`: headless evaluation of a trained policy. Each env's recurrent
// state is carried across steps and reset at episode starts.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <memory>

#include "agent/evaluator.h"
#include "agent/train_job.h"
#include "core/error.h"
#include "policy/device_choice.h"
#include "policy/policy_checkpoint.h"
#include "tools/commands.h"

namespace recur::cli {

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
  cmd->add_option("--seed", args->seed, "Seed of the evaluation envs")->capture_default_str();
  cmd->add_option("--num-envs", args->num_envs, "Envs run in parallel")
      ->check(CLI::Range(1, 1 << 12))
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "Print one JSON object");
  cmd->add_option("--device", args->device,
                  "Where the policy's core runs: cpu, cuda or auto (any checkpoint loads on any "
                  "device)")
      ->capture_default_str();
  cmd->callback([args, &exit_code] {
    std::filesystem::path path = args->target;
    if (std::filesystem::is_directory(path)) {
      const auto best = path / "checkpoints" / "best.safetensors";
      const auto latest = path / "checkpoints" / "latest.safetensors";
      RECUR_CHECK(std::filesystem::exists(best) || std::filesystem::exists(latest),
                  "{} has no checkpoints/best.safetensors or checkpoints/latest.safetensors; "
                  "pass a run directory of `recur train` or a checkpoint file",
                  path.string());
      path = std::filesystem::exists(best) ? best : latest;
    }
    const policy::PolicyCheckpoint ckpt = policy::load_policy(path);
    agent::EvalConfig cfg;
    const auto env_it = ckpt.metadata.find(agent::kMetaEnvId);
    cfg.env_id =
        !args->env.empty() ? args->env : (env_it != ckpt.metadata.end() ? env_it->second : "");
    RECUR_CHECK(!cfg.env_id.empty(), "{} does not record its env; pass --env ID", path.string());
    if (args->env.empty() || (env_it != ckpt.metadata.end() && args->env == env_it->second)) {
      const auto opt_it = ckpt.metadata.find(agent::kMetaEnvOptions);
      if (opt_it != ckpt.metadata.end() && !opt_it->second.empty()) {
        size_t start = 0;
        const std::string& s = opt_it->second;
        while (start < s.size()) {
          const size_t end = std::min(s.find(';', start), s.size());
          auto [k, v] = parse_key_value(s.substr(start, end - start));
          cfg.env_options.set(k, v);
          start = end + 1;
        }
      }
    }
    cfg.episodes = args->episodes;
    cfg.num_envs = args->num_envs;
    cfg.seed = args->seed;
    cfg.deterministic = args->deterministic;
    std::string why;
    cfg.placement.device =
        policy::resolve_device("--device", args->device, policy::query_devices(), &why);
    if (!why.empty()) spdlog::info("{}", why);
    const auto r = agent::evaluate_policy(ckpt.spec, ckpt.tensors, cfg);
    if (args->json) {
      fmt::print(
          "{{\"checkpoint\": \"{}\", \"env_id\": \"{}\", \"episodes\": {}, "
          "\"deterministic\": {}, \"return_mean\": {}, \"return_std\": {}, "
          "\"length_mean\": {}}}\n",
          path.string(), cfg.env_id, r.returns.size(), args->deterministic, r.mean_return(),
          r.std_return(), r.mean_length());
    } else {
      fmt::print("{} on {} ({} episodes, {}): return {:.2f} +- {:.2f}, length {:.1f}\n",
                 path.string(), cfg.env_id, r.returns.size(),
                 args->deterministic ? "deterministic" : "stochastic", r.mean_return(),
                 r.std_return(), r.mean_length());
    }
    exit_code = 0;
  });
}

}  // namespace recur::cli
