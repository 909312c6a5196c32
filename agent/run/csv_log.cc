#include "agent/run/csv_log.h"

#include "core/error.h"

namespace recur::agent {
namespace fs = std::filesystem;

CsvField::CsvField(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) {
    text_ = text;
    return;
  }
  // RFC 4180: the field in double quotes, each quote inside doubled. (Built with push_back: GCC
  // 12 at -O3 reports a false -Wrestrict on assigning a literal to the member and appending.)
  text_.reserve(text.size() + 2);
  text_.push_back('"');
  for (const char c : text) {
    if (c == '"') text_.push_back('"');
    text_.push_back(c);
  }
  text_.push_back('"');
}

namespace {

std::string header_line(const std::vector<std::string>& header) {
  std::string line;
  for (const std::string& name : header) {
    if (!line.empty()) line += ',';
    line += CsvField(name).text();
  }
  return line;
}

}  // namespace

CsvLog::CsvLog(fs::path path, std::vector<std::string> header, detail::File file, int64_t rows)
    : path_(std::move(path)), header_(std::move(header)), file_(std::move(file)), rows_(rows) {}

CsvLog CsvLog::create(const fs::path& path, std::vector<std::string> header) {
  RECUR_CHECK_ARG(!header.empty(), "CsvLog {}: the header has no columns", path.string());
  detail::File file = detail::create_log_file(path, header_line(header) + "\n");
  return CsvLog(path, std::move(header), std::move(file), 0);
}

CsvLog CsvLog::open_for_resume(const fs::path& path, std::vector<std::string> header,
                               int64_t keep_rows) {
  RECUR_CHECK_ARG(!header.empty(), "CsvLog {}: the header has no columns", path.string());
  RECUR_CHECK_ARG(keep_rows >= 0, "CsvLog {}: keep_rows {} < 0", path.string(), keep_rows);
  std::error_code ec;
  if (keep_rows == 0 && !fs::exists(path, ec)) return create(path, std::move(header));

  const std::string expected = header_line(header);
  detail::ReopenedLog log =
      detail::reopen_log_file(path, 1, keep_rows, [&](const std::vector<std::string>& head) {
        RECUR_CHECK(head[0] == expected,
                    "cannot resume {}: its header is\n  {}\nbut this version of recur writes\n  "
                    "{}\n(the run was made by a different version; start a new run)",
                    path.string(), head[0], expected);
      });
  return CsvLog(path, std::move(header), std::move(log.file), keep_rows);
}

void CsvLog::write_row(std::span<const CsvField> fields) {
  RECUR_CHECK_ARG(fields.size() == header_.size(), "CsvLog {}: a row of {} values for {} columns",
                  path_.string(), fields.size(), header_.size());
  line_.clear();
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) line_ += ',';
    line_ += fields[i].text();
  }
  line_ += '\n';
  detail::append(file_.get(), line_, path_);
  ++rows_;
}

}  // namespace recur::agent
