// `--plugin PATH` on every command that takes an env id (envs/plugin.h), and finding a run's
// plugins again when `recur eval` / `recur record` reopen it.
#include <spdlog/spdlog.h>

#include "agent/env_plugins.h"
#include "envs/plugin_loader.h"
#include "tools/commands.h"

namespace recur::cli {

void add_plugin_option(CLI::App* cmd, std::vector<std::string>& paths) {
  cmd->add_option("--plugin", paths,
                  "Env plugin to load first: a shared library built with recur_add_env_plugin "
                  "(repeatable)");
}

void load_cli_plugins(const std::vector<std::string>& paths) {
  for (const auto& p : paths) {
    const auto& loaded = envs::load_plugin(p);
    spdlog::debug("plugin {} {} from {}: {}", loaded.name, loaded.version, loaded.path.string(),
                  fmt::join(loaded.env_ids, ", "));
  }
}

void load_target_plugins(const agent::PolicyTarget& target,
                         const std::vector<std::string>& cli_plugins) {
  // --plugin takes over from what the checkpoint recorded: the user chose the files.
  if (!cli_plugins.empty()) {
    load_cli_plugins(cli_plugins);
    return;
  }
  const auto& meta = target.checkpoint.metadata;
  if (const auto it = meta.find(agent::kMetaEnvPlugins); it != meta.end())
    agent::load_recorded_plugins(it->second, target.path.string());
}

}  // namespace recur::cli
