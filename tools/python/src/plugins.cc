// recur._recur.load_plugin and loaded_plugins: C++ env plugins (envs/plugin.h) in the Python
// process. The loader promotes this module to the global scope before dlopen (Python opens it
// RTLD_LOCAL), and the module exports recur's symbols (recur_export_for_plugins in
// CMakeLists.txt), so a plugin's undefined Env, Space and Options symbols resolve against it.
#include <fmt/format.h>
#include <pybind11/stl.h>

#include "agent/env_plugins.h"
#include "bindings.h"
#include "core/error.h"
#include "envs/plugin_loader.h"

namespace recur::python {
namespace {

py::dict plugin_dict(const envs::LoadedPlugin& p) {
  py::dict d;
  d["path"] = p.path.string();
  d["name"] = p.name;
  d["version"] = p.version;
  d["env_ids"] = p.env_ids;
  return d;
}

}  // namespace

void load_target_plugins(const agent::PolicyTarget& target,
                         const std::vector<std::string>& plugins) {
  if (!plugins.empty()) {
    agent::load_env_plugins(plugins);
    return;
  }
  const auto& meta = target.checkpoint.metadata;
  const auto it = meta.find(agent::kMetaEnvPlugins);
  if (it == meta.end()) return;
  try {
    agent::load_recorded_plugins(it->second, target.path.string());
  } catch (const Error& e) {
    // The loader's way out names the CLI's flag; say the Python spelling too.
    throw Error(fmt::format("{} (from Python: plugins=[PATH])", e.what()));
  }
}

void bind_plugins(py::module_& m) {
  m.def(
      "load_plugin", [](const std::string& path) { return plugin_dict(envs::load_plugin(path)); },
      py::arg("path"), "envs::load_plugin: registers a plugin's envs; returns what it loaded.");
  m.def(
      "loaded_plugins",
      [] {
        py::list out;
        for (const auto& p : envs::loaded_plugins()) out.append(plugin_dict(p));
        return out;
      },
      "Every plugin this process has loaded, in load order.");
}

}  // namespace recur::python
