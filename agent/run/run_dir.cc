#include "agent/run/run_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
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

[[noreturn]] void fail(const std::string& what, const fs::path& path, int err) {
  throw Error(fmt::format("{} {}: {}", what, path.string(), std::strerror(err)));
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
  return RunDir(dir);
}

fs::path RunDir::latest_checkpoint() const {
  return checkpoints_dir() / "latest.safetensors";
}
fs::path RunDir::best_checkpoint() const {
  return checkpoints_dir() / "best.safetensors";
}
fs::path RunDir::step_checkpoint(int64_t env_steps) const {
  return checkpoints_dir() / fmt::format("step_{}.safetensors", env_steps);
}

void RunDir::write_config(const std::string& yaml) const {
  write_file_atomic(config_yaml(), yaml);
}

void write_file_atomic(const fs::path& path, const std::string& text) {
  const fs::path dir = path.has_parent_path() ? path.parent_path() : ".";
  // Same directory as the target, so that rename() is atomic; pid + counter keep concurrent
  // writers off each other's temp file.
  static std::atomic<uint64_t> writes{0};
  const fs::path tmp =
      dir / fmt::format(".{}.tmp.{}.{}", path.filename().string(), ::getpid(), writes++);
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) fail("cannot create", tmp, errno);
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0 &&
            ::fsync(::fileno(f)) == 0;
  int err = errno;
  if (std::fclose(f) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (ok && std::rename(tmp.c_str(), path.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    std::remove(tmp.c_str());
    fail("cannot write", path, err);
  }
  // The rename is durable only once the directory entry is on disk; some file systems cannot
  // sync a directory (EINVAL), and the data itself is synced already.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) fail("cannot open", dir, errno);
  const bool synced = ::fsync(dfd) == 0 || errno == EINVAL;
  err = errno;
  ::close(dfd);
  if (!synced) fail("cannot sync", dir, err);
}

}  // namespace recur::agent
