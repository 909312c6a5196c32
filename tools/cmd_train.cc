// `recur train CONFIG [--set k=v]... [--print-config]`: a training job from a YAML config.
// Ctrl-C finishes the current update, writes a checkpoint and exits 0.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <memory>

#include "agent/config_yaml.h"
#include "agent/train_job.h"
#include "core/error.h"
#include "tools/commands.h"

namespace recur::cli {
namespace {
std::atomic<bool> g_stop{false};
extern "C" void on_sigint(int) {
  g_stop = true;
}
}  // namespace

void add_train_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("train", "Train a recurrent policy from a YAML config");
  struct Args {
    std::string config;
    std::vector<std::string> overrides;
    bool print_config = false;
    std::string resume;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("config", args->config,
                  "YAML config, e.g. configs/cartpole_novel.yaml (not needed with --resume)");
  cmd->add_option("--set", args->overrides, "Override a key: section.key=value (repeatable)");
  cmd->add_flag("--print-config", args->print_config,
                "Print the resolved config (every value) and exit");
  cmd->add_option("--resume", args->resume,
                  "Continue the run in this directory from its latest checkpoint (its "
                  "config.yaml, plus any --set, e.g. a larger run.total_env_steps)");
  cmd->callback([args, &exit_code] {
    RECUR_CHECK(!args->config.empty() || !args->resume.empty(),
                "train needs a CONFIG file (e.g. configs/cartpole_novel.yaml) or --resume RUN_DIR");
    const std::filesystem::path config_file =
        args->resume.empty() ? std::filesystem::path(args->config)
                             : std::filesystem::path(args->resume) / "config.yaml";
    const agent::TrainConfig config = agent::load_config(config_file, args->overrides);
    const std::string yaml = agent::to_yaml(config);
    if (args->print_config) {
      fmt::print("{}", yaml);
      exit_code = 0;
      return;
    }
    agent::TrainJobOptions options;
    options.name = config.run.name.empty() ? config_file.stem().string() : config.run.name;
    options.resume_dir = args->resume;
    options.stop_requested = &g_stop;
    g_stop = false;
    std::signal(SIGINT, on_sigint);
    const auto result = agent::run_train_job(config, yaml, options);
    std::signal(SIGINT, SIG_DFL);
    if (result.interrupted) {
      fmt::print("interrupted after {} env steps; run directory {}\n", result.env_steps,
                 result.run_dir.string());
    } else {
      const auto& e = result.final_eval;
      fmt::print(
          "final evaluation on {} ({} episodes, deterministic): return {:.2f} +- {:.2f}, "
          "length {:.1f}\n{} env steps in {:.1f} s; run directory {}\n",
          config.env.id, e.returns.size(), e.mean_return(), e.std_return(), e.mean_length(),
          result.env_steps, result.seconds, result.run_dir.string());
    }
    if (result.target && result.target_env_steps)
      fmt::print("target {:.2f} reached at {} env steps, {:.1f} s{}\n", *result.target,
                 *result.target_env_steps, result.target_seconds,
                 result.stopped_at_target ? " (run.stop_at_target: stopped there)" : "");
    else if (result.target)
      fmt::print("target {:.2f} not reached by any evaluation\n", *result.target);
    exit_code = 0;
  });
}

}  // namespace recur::cli
