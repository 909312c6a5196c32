// Every config shipped in configs/ (the tune/ search spaces aside) must load, validate and build
// its env with its options: a renamed key, a retired env id or a bad env option in a shipped file
// fails here, not in a user's first command.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "agent/config/yaml.h"
#include "core/options.h"
#include "envs/registry.h"

namespace {

std::filesystem::path configs_dir() {
  // The data folder is compiled in (tests/data); RECUR_TEST_DATA_DIR overrides it elsewhere.
  const char* dir = std::getenv("RECUR_TEST_DATA_DIR");
  return std::filesystem::path(dir && *dir ? dir : RECUR_TEST_DATA_DIR) / ".." / ".." / "configs";
}

TEST_CASE("every shipped config loads, validates and makes its env") {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(configs_dir())) {
    const auto& path = entry.path();
    if (path.extension() != ".yaml") continue;
    if (path.parent_path().filename() == "tune") continue;  // Optuna search spaces, not configs
    // Its env is the example plugin, named on the command line (tests/cli/tmaze.sh trains it).
    if (path.filename() == "tmaze.yaml") continue;
    files.push_back(path);
  }
  REQUIRE(files.size() >= 14);
  for (const auto& file : files) {
    CAPTURE(file.string());
    const auto config = recur::agent::load_config(file, {});
    // configs/mujoco/ in a build without MuJoCo: the config still loads and validates above; its
    // env is listed but cannot be made (tests/envs/mujoco checks that message).
    if (!recur::envs::registry().at(config.env.id).available) {
      MESSAGE("skipping the env of " << file.string() << ": " << config.env.id
                                     << " is not available in this build");
      continue;
    }
    recur::Options options;
    for (const auto& [key, value] : config.env.options) options.set(key, value);
    const auto env = recur::envs::make(config.env.id, options);
    CHECK(env->obs_dim() > 0);
  }
}

}  // namespace
