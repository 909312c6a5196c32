// A CSV log with a fixed header (progress.csv, eval.csv): one row appended per call and flushed at
// once, so a crash loses at most the row being written. Numbers are printed to round-trip
// (doubles and floats in their shortest exact form, "nan"/"inf" as Python and pandas read them);
// a missing value (std::nullopt) is an empty field; strings are quoted only when they hold a
// comma, quote or line break.
//
// Resume: open_for_resume keeps the header and the first keep_rows rows (those logged up to the
// checkpoint) and drops the rest, so a resumed run's file equals an uninterrupted run's.
#pragma once

#include <array>
#include <concepts>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "agent/run/csv_file.h"

namespace recur::agent {

// One field of a row, formatted when made.
class CsvField {
 public:
  template <std::integral T>
  CsvField(T value) : text_(fmt::format("{}", value)) {}  // NOLINT: implicit on purpose
  CsvField(bool value) : text_(value ? "1" : "0") {}
  template <std::floating_point T>
  CsvField(T value) : text_(fmt::format("{}", value)) {}
  CsvField(std::string_view text);
  CsvField(const char* text) : CsvField(std::string_view(text)) {}
  CsvField(const std::string& text) : CsvField(std::string_view(text)) {}
  CsvField(std::nullopt_t) {}
  template <typename T>
  CsvField(const std::optional<T>& value) : CsvField(value ? CsvField(*value) : CsvField("")) {}

  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

class CsvLog {
 public:
  // Creates a new file holding the header line; throws recur::Error if it exists.
  static CsvLog create(const std::filesystem::path& path, std::vector<std::string> header);
  // Reopens a log for a resume: its header must equal `header` (else recur::Error showing both),
  // its first keep_rows rows are kept and later ones dropped. A missing file is created when
  // keep_rows is 0 (the run stopped before the first row).
  static CsvLog open_for_resume(const std::filesystem::path& path, std::vector<std::string> header,
                                int64_t keep_rows);

  // Appends one row; the number of values must equal the number of columns.
  template <typename... Ts>
  void row(const Ts&... values) {
    const std::array<CsvField, sizeof...(Ts)> fields{CsvField(values)...};
    write_row(fields);
  }
  void write_row(std::span<const CsvField> fields);

  const std::filesystem::path& path() const { return path_; }
  const std::vector<std::string>& header() const { return header_; }
  int64_t rows() const { return rows_; }  // data rows in the file, kept ones included

 private:
  CsvLog(std::filesystem::path path, std::vector<std::string> header, detail::File file,
         int64_t rows);

  std::filesystem::path path_;
  std::vector<std::string> header_;
  detail::File file_;
  int64_t rows_ = 0;
  std::string line_;  // reused between rows
};

}  // namespace recur::agent
