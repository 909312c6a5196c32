// The file side shared by CsvLog and MonitorLog: create a log file, append a line and flush it,
// and reopen one for a resume keeping only the records written before the checkpoint.
// Internal to agent/run.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace recur::agent::detail {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// Creates `path` (it must not exist: a log is never silently overwritten) and writes `head`.
File create_log_file(const std::filesystem::path& path, std::string_view head);

// Writes `text` and flushes, so that a crash loses at most the line being written.
void append(std::FILE* file, std::string_view text, const std::filesystem::path& path);

struct ReopenedLog {
  std::vector<std::string> head_lines;  // without their line ending ("\n" or "\r\n")
  File file;                            // positioned at the end, for appending
};

// Opens an existing log whose first `head_lines` lines are a preamble, passes them to
// `check_head` (which throws if they are not what the caller writes: checked before anything is
// truncated, so a wrong file is left as it was), keeps the next `keep_rows` records and truncates
// everything after them (rows logged after the checkpoint a resume starts from, or a row cut short
// by a crash). A record ends at a newline outside double quotes. Throws recur::Error naming the
// file when it has fewer lines or records than that.
ReopenedLog reopen_log_file(
    const std::filesystem::path& path, int head_lines, int64_t keep_rows,
    const std::function<void(const std::vector<std::string>& head_lines)>& check_head);

}  // namespace recur::agent::detail
