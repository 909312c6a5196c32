// `recur env-check ID`: runs the env test's checks on one env and prints a verdict.
#include <fmt/format.h>

#include <memory>

#include "envs/env_check.h"
#include "tools/cli/commands.h"

namespace recur::cli {

void add_env_check_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("env-check", "Check one environment against recur's env rules");
  struct Args {
    std::string id;
    std::vector<std::string> options;
    envs::EnvCheckConfig config;
    std::vector<std::string> plugins;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("id", args->id, "Env id, e.g. CartPole-v1")->required();
  cmd->add_option("-o,--option", args->options, "Env option key=value (repeatable)");
  cmd->add_option("--seed", args->config.seed, "Seed of the checked episodes")
      ->capture_default_str();
  cmd->add_option("--episodes", args->config.episodes, "Random episodes per check")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  add_plugin_option(cmd, args->plugins);
  cmd->callback([args, &exit_code] {
    load_cli_plugins(args->plugins);
    const auto& [id, options, config, plugins] = *args;
    const auto report = envs::check_env(id, parse_env_options(options), config);
    for (const auto& r : report.results)
      fmt::print("{}  {:<13} {}\n", r.passed ? "PASS" : "FAIL", r.name, r.detail);
    const bool ok = report.passed();
    fmt::print("{}: {}\n", id, ok ? "all checks passed" : "FAILED");
    exit_code = ok ? 0 : 1;
  });
}

}  // namespace recur::cli
