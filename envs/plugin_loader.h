// Loading env plugins (envs/plugin.h) into the registry.
//
//   const auto& p = recur::envs::load_plugin("build/libtmaze_plugin.so");
//   auto env = recur::envs::make(p.env_ids[0]);
//
// dlopen with RTLD_NOW | RTLD_LOCAL: a symbol the plugin needs and the program lacks fails here,
// at load, not in the middle of a rollout; the plugin's own symbols stay out of the way of other
// plugins'. A plugin is never unloaded (its envs, vtables and factories live until exit). Loading
// the same file again returns the first load.
//
// Every failure is a recur::Error naming the file and what to do, and leaves the registry as it
// was: a missing file, a file that is not a shared library for this machine, no
// `recur_env_plugin` symbol, a plugin built against another recur (both versions named) or
// another C++ standard library, an id that clashes with a built-in or another plugin, an
// exception thrown during registration.
#pragma once

#include <deque>
#include <filesystem>
#include <string>
#include <vector>

#include "envs/registry.h"

namespace recur::envs {

struct LoadedPlugin {
  std::filesystem::path path;  // absolute, as loaded
  std::string name;            // the plugin's own name and version (RECUR_ENV_PLUGIN)
  std::string version;
  std::vector<std::string> env_ids;  // what it registered, in order
};

// Loads the plugin at `path` (relative to the working directory) into `registry`.
const LoadedPlugin& load_plugin(const std::filesystem::path& path, Registry& registry = registry());

// Every plugin this process has loaded, in load order.
const std::deque<LoadedPlugin>& loaded_plugins();

// The plugin that registered `env_id`, or nullptr (a built-in or program env).
const LoadedPlugin* plugin_of(const std::string& env_id);

}  // namespace recur::envs
