// monitor.csv in the format of stable_baselines3.common.monitor.Monitor, byte for byte, so that
// SB3's load_results, rl-zoo plotting scripts and anything else that reads Monitor files read
// recur's runs:
//
//   #{"t_start": 1614621122.3441029, "env_id": "CartPole-v1"}\n
//   r,l,t\r\n
//   500.0,500,2.900432\r\n
//
// Line 1 is '#' and json.dumps of the header; the rest is written by Python's csv.DictWriter,
// whose line ending is "\r\n". r = round(return, 6) and t = round(seconds since t_start, 6),
// printed as Python's repr of a float (shortest round-trip digits, "500.0" not "500").
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

#include "agent/run/csv_file.h"

namespace recur::agent {

class MonitorLog {
 public:
  // Creates a new monitor file; t_start is the current unix time. Throws if the file exists.
  static MonitorLog create(const std::filesystem::path& path, const std::string& env_id);
  // Reopens one for a resume: keeps t_start (t goes on counting from the original start, so it
  // includes the time the run was stopped) and the first keep_rows episodes, drops the rest.
  static MonitorLog open_for_resume(const std::filesystem::path& path, int64_t keep_rows);

  // One finished episode.
  void episode(double episode_return, int64_t length);

  double t_start() const { return t_start_; }  // unix time, seconds
  int64_t rows() const { return rows_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  MonitorLog(std::filesystem::path path, double t_start, detail::File file, int64_t rows);

  std::filesystem::path path_;
  double t_start_ = 0;
  detail::File file_;
  int64_t rows_ = 0;
};

// Python's repr(round(x, 6)): the form of r and t in monitor.csv. Exposed for tests.
std::string python_round6_repr(double x);
// Python's repr(x) for a float.
std::string python_float_repr(double x);

}  // namespace recur::agent
