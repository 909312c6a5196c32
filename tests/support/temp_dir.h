// Helpers shared by tests that touch files: a fresh temporary directory per test, whole-file read
// and write, and the message of the recur::Error a call throws.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/error.h"

namespace recur::test {

// A fresh, empty directory <temp>/recur_<tag>_<pid>_<n>, removed at scope exit unless `keep`.
struct TempDir {
  std::filesystem::path path;
  bool keep = false;
  explicit TempDir(const std::string& tag) {
    static int counter = 0;
    path = std::filesystem::temp_directory_path() /
           ("recur_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    if (!keep) std::filesystem::remove_all(path);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

// What f() throws as recur::Error, or "" when it throws nothing (other exceptions propagate).
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const recur::Error& e) {
    return e.what();
  }
  return "";
}

// A whole file as bytes ("" when it cannot be read), and bytes written over a file.
inline std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
inline void write_all(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

}  // namespace recur::test
