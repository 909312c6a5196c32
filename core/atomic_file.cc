#include "core/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <string>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/error.h"

namespace recur {
namespace fs = std::filesystem;
namespace {
[[noreturn]] void fail(const std::string& what, const fs::path& path, int err) {
  throw Error(fmt::format("{} {}: {}", what, path.string(), std::strerror(err)));
}

fs::path dir_of(const fs::path& path) {
  return path.has_parent_path() ? path.parent_path() : fs::path(".");
}

void sync_dir(const fs::path& dir) {
  // The rename is durable only once the directory entry is on disk; some file systems cannot
  // sync a directory (EINVAL), and the data itself is synced already.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) fail("cannot open", dir, errno);
  const bool synced = ::fsync(dfd) == 0 || errno == EINVAL;
  const int err = errno;
  ::close(dfd);
  if (!synced) fail("cannot sync", dir, err);
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (const char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

bool target_matches(const std::string& target, std::string_view pattern) {
  if (pattern == "*") return true;
  if (!pattern.empty() && pattern[0] == '*') {
    const std::string_view suffix = pattern.substr(1);
    return target.size() > suffix.size() &&
           std::string_view(target).substr(target.size() - suffix.size()) == suffix;
  }
  return target == pattern;
}

}  // namespace

std::optional<TempName> parse_temp_name(std::string_view name) {
  if (name.size() < 2 || name[0] != '.') return std::nullopt;
  for (const char* kind : {".tmp.", ".old."}) {
    const size_t at = name.rfind(kind);
    if (at == std::string_view::npos || at < 2) continue;
    // <pid> or <pid>.<n>
    std::string_view rest = name.substr(at + 5);
    const size_t dot = rest.find('.');
    const std::string_view pid = rest.substr(0, dot);
    if (!all_digits(pid) || pid.size() > 9) continue;
    if (dot != std::string_view::npos && !all_digits(rest.substr(dot + 1))) continue;
    TempName t;
    t.target = std::string(name.substr(1, at - 1));
    t.pid = std::stoi(std::string(pid));
    t.old = kind[1] == 'o';
    return t;
  }
  return std::nullopt;
}

fs::path temp_path_for(const fs::path& path) {
  // Same directory as the target, so that rename() is atomic; pid + counter keep concurrent
  // writers off each other's temp file, and the pid tells a later writer whether it is stale.
  static std::atomic<uint64_t> writes{0};
  return dir_of(path) /
         fmt::format(".{}.tmp.{}.{}", path.filename().string(), ::getpid(), writes++);
}

void commit_temp_file(const fs::path& temp, const fs::path& path) {
  const int fd = ::open(temp.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot open", temp, errno);
  const bool synced = ::fsync(fd) == 0;
  const int err = errno;
  ::close(fd);
  if (!synced) fail("cannot sync", temp, err);
  if (std::rename(temp.c_str(), path.c_str()) != 0)
    fail("cannot rename " + temp.string() + " to", path, errno);
  sync_dir(dir_of(path));
}

void write_file_atomic(const fs::path& path, std::string_view text) {
  const fs::path dir = dir_of(path);
  remove_stale_temps(dir, path.filename().string());
  const fs::path tmp = temp_path_for(path);
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
  sync_dir(dir);
}

std::vector<fs::path> remove_stale_temps(const fs::path& dir, std::string_view target) {
  std::vector<fs::path> removed;
  std::error_code ec;
  std::vector<std::pair<fs::path, TempName>> stale;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::optional<TempName> t = parse_temp_name(e.path().filename().string());
    if (!t || !target_matches(t->target, target) || t->pid <= 0) continue;
    // Only a writer that no longer exists: kill(pid, 0) fails with ESRCH. EPERM means a process
    // of another user holds the pid; a live writer's temp is never touched.
    if (::kill(static_cast<pid_t>(t->pid), 0) == 0 || errno != ESRCH) continue;
    stale.emplace_back(e.path(), *t);
  }
  for (const auto& [path, t] : stale) {
    const fs::path target_path = dir / t.target;
    if (t.old && !fs::exists(target_path, ec)) {
      // A writer died between moving the old version aside and moving the new one in: the old
      // one is the last complete version, so it goes back.
      fs::rename(path, target_path, ec);
      if (!ec) {
        spdlog::warn("restored {} from {}, left by process {} which died while replacing it",
                     target_path.string(), path.filename().string(), t.pid);
        continue;
      }
    }
    fs::remove_all(path, ec);
    if (ec) {
      spdlog::warn("cannot remove {}, left by process {} which no longer runs: {}", path.string(),
                   t.pid, ec.message());
      continue;
    }
    spdlog::warn("removed {}, left unfinished by process {} (killed or crashed)", path.string(),
                 t.pid);
    removed.push_back(path);
  }
  return removed;
}

}  // namespace recur
