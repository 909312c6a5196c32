// `recur train CONFIG [--set k=v]... [--print-config]`: a training job from a YAML config.
// Ctrl-C finishes the current update, writes a checkpoint and exits 0.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <csignal>
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
  cmd->add_option("config", args->config, "YAML config, e.g. configs/cartpole_novel.yaml")
      ->required();
  cmd->add_option("--set", args->overrides, "Override a key: section.key=value (repeatable)");
  cmd->add_flag("--print-config", args->print_config,
                "Print the resolved config (every value) and exit");
  cmd->add_option("--resume", args->resume, "Continue the run in this directory");
  cmd->callback([args, &exit_code] {
    RECUR_CHECK(args->resume.empty(),
                "--resume is not available yet: this build of recur cannot restore the full "
                "trainer state (env, RNG and optimizer state); start a new run instead");
    const agent::TrainConfig config = agent::load_config(args->config, args->overrides);
    const std::string yaml = agent::to_yaml(config);
    if (args->print_config) {
      fmt::print("{}", yaml);
      exit_code = 0;
      return;
    }
    const std::string name = config.run.name.empty()
                                 ? std::filesystem::path(args->config).stem().string()
                                 : config.run.name;
    g_stop = false;
    std::signal(SIGINT, on_sigint);
    const auto result = agent::run_train_job(config, yaml, name, &g_stop);
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
    exit_code = 0;
  });
}

}  // namespace recur::cli
