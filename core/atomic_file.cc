#include "core/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "core/error.h"

namespace recur {
namespace fs = std::filesystem;
namespace {
[[noreturn]] void fail(const std::string& what, const fs::path& path, int err) {
  throw Error(fmt::format("{} {}: {}", what, path.string(), std::strerror(err)));
}
}  // namespace

void write_file_atomic(const fs::path& path, std::string_view text) {
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

}  // namespace recur
