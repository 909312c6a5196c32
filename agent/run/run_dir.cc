#include "agent/run/run_dir.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <ctime>

#include <fmt/format.h>

#include "core/error.h"

namespace recur::agent {
namespace fs = std::filesystem;

namespace {

std::string timestamp(std::chrono::system_clock::time_point now) {
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm local{};
  ::localtime_r(&t, &local);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y%m%d-%H%M%S", &local);
  return buf;
}

}  // namespace

RunDir RunDir::create(const fs::path& output_dir, const std::string& name,
                      std::chrono::system_clock::time_point now) {
  RECUR_CHECK(!name.empty() && name.find('/') == std::string::npos,
              "bad run name '{}': it must be non-empty and contain no '/'", name);
  std::error_code ec;
  fs::create_directories(output_dir, ec);
  RECUR_CHECK(!ec, "cannot create output directory {}: {}", output_dir.string(), ec.message());

  // create_directory reports whether it made the directory, so two runs racing for the same
  // name cannot both get it: the loser moves on to the next suffix.
  const std::string base = fmt::format("{}-{}", name, timestamp(now));
  for (int n = 1;; ++n) {
    const fs::path dir = output_dir / (n == 1 ? base : fmt::format("{}-{}", base, n));
    const bool made = fs::create_directory(dir, ec);
    RECUR_CHECK(!ec, "cannot create run directory {}: {}", dir.string(), ec.message());
    if (!made) continue;
    fs::create_directory(dir / "checkpoints", ec);
    RECUR_CHECK(!ec, "cannot create {}: {}", (dir / "checkpoints").string(), ec.message());
    return RunDir(dir);
  }
}

RunDir RunDir::open(const fs::path& dir) {
  std::error_code ec;
  RECUR_CHECK(fs::is_directory(dir, ec), "cannot resume from {}: no such directory", dir.string());
  RECUR_CHECK(fs::is_regular_file(dir / "config.yaml", ec),
              "cannot resume from {}: not a run directory (it has no config.yaml)", dir.string());
  // A crash between creating the run and its first checkpoint may leave no checkpoints/.
  fs::create_directories(dir / "checkpoints", ec);
  RECUR_CHECK(!ec, "cannot create {}: {}", (dir / "checkpoints").string(), ec.message());
  // What a killed run was writing (step checkpoints are written once each, so no later write of
  // the same target would find their temps).
  for (const fs::path& sub : {dir, dir / "checkpoints", dir / "videos"})
    if (fs::is_directory(sub, ec)) remove_stale_temps(sub, "*");
  return RunDir(dir);
}

fs::path RunDir::latest_checkpoint() const {
  return checkpoints_dir() / "latest.safetensors";
}
fs::path RunDir::best_checkpoint() const {
  return checkpoints_dir() / "best.safetensors";
}
fs::path RunDir::target_checkpoint() const {
  return checkpoints_dir() / "target.safetensors";
}
fs::path RunDir::step_checkpoint(int64_t env_steps) const {
  return checkpoints_dir() / fmt::format("step_{}.safetensors", env_steps);
}

void RunDir::write_config(const std::string& yaml) const {
  write_file_atomic(config_yaml(), yaml);
}

}  // namespace recur::agent
