// `--plugin PATH` on every command that takes an env id (envs/plugin.h). eval and record hand
// theirs to agent::evaluate / agent::record_dataset, which otherwise load the run's own.
#include <spdlog/spdlog.h>

#include "envs/plugin_loader.h"
#include "tools/cli/commands.h"

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

}  // namespace recur::cli
