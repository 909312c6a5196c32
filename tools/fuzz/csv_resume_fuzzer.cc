// libFuzzer harness for the logs that `recur train --resume` reopens: CsvLog::open_for_resume
// (progress.csv, eval.csv) and MonitorLog::open_for_resume (monitor.csv), both through
// reopen_log_file. The input is written to a file of this process's own and reopened, then one
// row is appended, as a resumed run does. The first input byte picks the reader and how many rows
// to keep: bit 0 monitor.csv or a CSV log; bit 1 (CSV logs) whether the expected header is the
// file's own first line (so that the header check passes and the row scan is reached) or a fixed
// one; bits 2-7 keep_rows (0-63). Every input must reopen or throw recur::Error; anything else is
// a bug.
#include <fstream>
#include <sstream>

#include "agent/run/csv_log.h"
#include "agent/run/monitor_log.h"
#include "core/error.h"
#include "tools/fuzz/fuzz_util.h"

namespace {

// The header a CsvLog would have written as `line` (unquoted names split at commas).
std::vector<std::string> header_of(std::string_view line) {
  if (const size_t nl = line.find('\n'); nl != std::string_view::npos) line = line.substr(0, nl);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::vector<std::string> names = recur::fuzz::split(line, ',');
  return names;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  const std::string_view file = recur::fuzz::as_text(data + 1, size - 1);
  const int64_t keep_rows = mode >> 2;
  const auto path = recur::fuzz::scratch_dir() / "log.csv";
  recur::fuzz::write_file(path, file);
  try {
    if (mode & 1) {
      recur::agent::MonitorLog log = recur::agent::MonitorLog::open_for_resume(path, keep_rows);
      log.episode(1.5, 10);
    } else {
      std::vector<std::string> header = {"env_steps", "return_mean", "return_std"};
      if (mode & 2) header = header_of(file);
      recur::agent::CsvLog log = recur::agent::CsvLog::open_for_resume(path, header, keep_rows);
      std::vector<recur::agent::CsvField> row(log.header().size(), recur::agent::CsvField(1.25));
      log.write_row(row);
      if (log.rows() != keep_rows + 1) __builtin_trap();
    }
  } catch (const recur::Error&) {
    // Rejecting a file that does not fit is the expected outcome.
  }
  return 0;
}
