#include "agent/run/monitor_log.h"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "core/error.h"

namespace recur::agent {
namespace fs = std::filesystem;

namespace {

double unix_now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

// json.dumps of a string: quotes, backslashes and control characters escaped.
std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<int>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// The value after "t_start": in line 1 (json.dumps writes the key first, then ", ").
double parse_t_start(const std::string& line, const fs::path& path) {
  const std::string key = "\"t_start\":";
  const size_t at = line.find(key);
  RECUR_CHECK(!line.empty() && line[0] == '#' && at != std::string::npos,
              "cannot resume {}: its first line is not a Monitor header "
              "(#{{\"t_start\": ..., \"env_id\": ...}}): {}",
              path.string(), line);
  const char* begin = line.c_str() + at + key.size();
  char* end = nullptr;
  const double t = std::strtod(begin, &end);
  RECUR_CHECK(end != begin && std::isfinite(t), "cannot resume {}: bad t_start in {}",
              path.string(), line);
  return t;
}

}  // namespace

std::string python_float_repr(double x) {
  if (std::isnan(x)) return "nan";  // Python has no "-nan"
  // fmt's shortest form is Python's repr except that integral values lack the ".0".
  std::string s = fmt::format("{}", x);
  if (s.find_first_not_of("-0123456789") == std::string::npos) s += ".0";
  return s;
}

std::string python_round6_repr(double x) {
  // Python rounds the exact binary value to 6 decimals (half to even on exact ties, as does
  // fmt's correctly rounded "{:.6f}") and returns the nearest double. Beyond 2^53 every double is
  // an integer already.
  if (!std::isfinite(x) || std::fabs(x) >= 9007199254740992.0) return python_float_repr(x);
  const std::string fixed = fmt::format("{:.6f}", x);
  return python_float_repr(std::strtod(fixed.c_str(), nullptr));
}

MonitorLog::MonitorLog(fs::path path, double t_start, detail::File file, int64_t rows)
    : path_(std::move(path)), t_start_(t_start), file_(std::move(file)), rows_(rows) {}

MonitorLog MonitorLog::create(const fs::path& path, const std::string& env_id) {
  const double t_start = unix_now();
  const std::string head = fmt::format("#{{\"t_start\": {}, \"env_id\": {}}}\nr,l,t\r\n",
                                       python_float_repr(t_start), json_string(env_id));
  return MonitorLog(path, t_start, detail::create_log_file(path, head), 0);
}

MonitorLog MonitorLog::open_for_resume(const fs::path& path, int64_t keep_rows) {
  RECUR_CHECK_ARG(keep_rows >= 0, "MonitorLog {}: keep_rows {} < 0", path.string(), keep_rows);
  double t_start = 0;
  detail::ReopenedLog log =
      detail::reopen_log_file(path, 2, keep_rows, [&](const std::vector<std::string>& head) {
        t_start = parse_t_start(head[0], path);
        RECUR_CHECK(head[1] == "r,l,t", "cannot resume {}: its header is '{}', not 'r,l,t'",
                    path.string(), head[1]);
      });
  return MonitorLog(path, t_start, std::move(log.file), keep_rows);
}

void MonitorLog::episode(double episode_return, int64_t length) {
  const std::string line = fmt::format("{},{},{}\r\n", python_round6_repr(episode_return), length,
                                       python_round6_repr(unix_now() - t_start_));
  detail::append(file_.get(), line, path_);
  ++rows_;
}

}  // namespace recur::agent
