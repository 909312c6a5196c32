// Env plugins as training jobs use them: loading what a config names (env.plugin), recording
// which files a run used (path and SHA-256) in its checkpoints, and finding them again when
// `recur eval`, `recur record` or `recur train --resume` reopen the run.
//
// The record is sha256sum's format, one plugin per line ("<64 hex>  <absolute path>"), stored
// in checkpoint metadata under kMetaEnvPlugins, so `sha256sum -c` can check it by hand too.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace recur::agent {

inline constexpr const char* kMetaEnvPlugins = "run.env_plugins";

// SHA-256 of a file's bytes, lowercase hex; recur::Error naming the file when it cannot be read.
std::string sha256_file(const std::filesystem::path& path);

// Loads each plugin (envs::load_plugin: every failure is a recur::Error naming the file).
void load_env_plugins(const std::vector<std::string>& paths);

// The record of `paths` (absolute, as a loaded config holds them).
std::string plugin_record(const std::vector<std::string>& paths);

// The paths a record names, in order.
std::vector<std::string> recorded_plugin_paths(const std::string& record);

// Loads the plugins a run recorded, after checking that each file is still there and unchanged;
// otherwise recur::Error naming the file, both hashes where they differ, and the way out
// (`what` names the run or checkpoint in messages). With `only`, just the recorded plugins whose
// path is in it (a resumed config may have dropped or replaced some).
void load_recorded_plugins(const std::string& record, const std::string& what,
                           const std::vector<std::string>* only = nullptr);

}  // namespace recur::agent
