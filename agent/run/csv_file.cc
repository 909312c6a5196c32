#include "agent/run/csv_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/error.h"

namespace recur::agent::detail {
namespace fs = std::filesystem;

File create_log_file(const fs::path& path, std::string_view head) {
  // "x": fail rather than truncate a log that is already there.
  File file(std::fopen(path.c_str(), "wx"));
  if (!file && errno == EEXIST)
    throw Error(fmt::format("cannot create {}: the file exists (resume the run to append to it)",
                            path.string()));
  if (!file) throw Error(fmt::format("cannot create {}: {}", path.string(), std::strerror(errno)));
  append(file.get(), head, path);
  return file;
}

void append(std::FILE* file, std::string_view text, const fs::path& path) {
  if (std::fwrite(text.data(), 1, text.size(), file) != text.size() || std::fflush(file) != 0)
    throw Error(fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)));
}

ReopenedLog reopen_log_file(
    const fs::path& path, int head_lines, int64_t keep_rows,
    const std::function<void(const std::vector<std::string>& head_lines)>& check_head) {
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(fmt::format("cannot open {}: {}", path.string(), std::strerror(errno)));
    std::ostringstream ss;
    ss << in.rdbuf();
    bytes = std::move(ss).str();
  }

  ReopenedLog log;
  size_t pos = 0;
  for (int i = 0; i < head_lines; ++i) {
    const size_t nl = bytes.find('\n', pos);
    RECUR_CHECK(nl != std::string::npos,
                "{} is not a complete log: it ends within its first {} "
                "line(s)",
                path.string(), head_lines);
    std::string line = bytes.substr(pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    log.head_lines.push_back(std::move(line));
    pos = nl + 1;
  }
  check_head(log.head_lines);

  int64_t rows = 0;
  bool quoted = false;
  for (; rows < keep_rows && pos < bytes.size(); ++pos) {
    if (bytes[pos] == '"') quoted = !quoted;  // "" inside quotes toggles twice: no net change
    if (bytes[pos] == '\n' && !quoted) ++rows;
  }
  RECUR_CHECK(rows == keep_rows,
              "cannot resume {}: it holds {} complete row(s) but the checkpoint was taken after "
              "{}; the run directory does not belong to this checkpoint",
              path.string(), rows, keep_rows);

  std::error_code ec;
  fs::resize_file(path, pos, ec);
  RECUR_CHECK(!ec, "cannot truncate {}: {}", path.string(), ec.message());
  log.file.reset(std::fopen(path.c_str(), "ab"));
  if (!log.file)
    throw Error(fmt::format("cannot open {}: {}", path.string(), std::strerror(errno)));
  return log;
}

}  // namespace recur::agent::detail
