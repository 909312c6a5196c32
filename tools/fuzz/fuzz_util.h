// What the libFuzzer harnesses share: the input split into parts, the input written to a file for
// the readers that take a path, and the one outcome that counts as rejecting bad input.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace recur::fuzz {

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// `text` cut at every `sep` (the parts, in order, without the separators).
inline std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> parts;
  size_t at = 0;
  for (size_t cut; (cut = text.find(sep, at)) != std::string_view::npos; at = cut + 1)
    parts.emplace_back(text.substr(at, cut - at));
  parts.emplace_back(text.substr(at));
  return parts;
}

// A directory of this process's own under the temporary directory (libFuzzer's -jobs/-workers
// run several processes at once), made once and emptied of nothing: callers overwrite their files.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() /
             ("recur-fuzz-" + std::to_string(static_cast<long>(::getpid())));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

// Writes `bytes` to `path`, replacing what is there.
inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) std::abort();
  std::fclose(f);
}

}  // namespace recur::fuzz
