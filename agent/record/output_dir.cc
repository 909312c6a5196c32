#include "agent/record/output_dir.h"

#include <fstream>
#include <system_error>

#include "core/error.h"

namespace recur::agent::record {

namespace fs = std::filesystem;

void prepare_output_dir(const fs::path& dir, const std::string& what) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  RECUR_CHECK(!ec && fs::is_directory(dir), "{} {}: cannot create the directory: {}", what,
              dir.string(), ec ? ec.message() : "a file of that name exists");
  const fs::path probe = dir / ".recur-write-check";
  bool writable = false;
  {
    std::ofstream out(probe);
    writable = static_cast<bool>(out << "x");
  }
  fs::remove(probe, ec);
  RECUR_CHECK(writable, "{} {}: the directory is not writable", what, dir.string());
}

fs::path first_missing(const fs::path& path) {
  std::error_code ec;
  fs::path missing;
  for (fs::path p = fs::absolute(path, ec); !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    missing = p;
    if (p == p.parent_path()) break;
  }
  return missing;
}

void remove_if_only_directories(const fs::path& dir) {
  std::error_code ec;
  if (dir.empty() || !fs::is_directory(dir, ec)) return;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec))
    if (!it->is_directory(ec)) return;
  if (!ec) fs::remove_all(dir, ec);
}

}  // namespace recur::agent::record
