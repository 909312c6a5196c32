#include "agent/run/run_dir.h"

#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "agent/run/csv_log.h"
#include "agent/run/monitor_log.h"
#include "agent/run/progress_line.h"
#include "core/error.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using namespace recur::agent;

using recur::test::error_of;
using recur::test::read_all;
using recur::test::TempDir;
using recur::test::write_all;

namespace {}  // namespace

TEST_CASE("RunDir creates a timestamped directory and never reuses one") {
  TempDir tmp("run_dir_test");
  const auto now = std::chrono::system_clock::now();
  const RunDir a = RunDir::create(tmp.path / "runs", "cartpole", now);
  const RunDir b = RunDir::create(tmp.path / "runs", "cartpole", now);
  const RunDir c = RunDir::create(tmp.path / "runs", "cartpole", now);
  CHECK(fs::is_directory(a.checkpoints_dir()));
  CHECK(fs::is_directory(b.checkpoints_dir()));
  const std::string name = a.path().filename().string();
  // cartpole-YYYYmmdd-HHMMSS
  REQUIRE(name.size() == std::string("cartpole-20240101-120000").size());
  CHECK(name.rfind("cartpole-", 0) == 0);
  CHECK(name[17] == '-');
  CHECK(b.path().filename().string() == name + "-2");
  CHECK(c.path().filename().string() == name + "-3");

  CHECK(a.config_yaml() == a.path() / "config.yaml");
  CHECK(a.progress_csv() == a.path() / "progress.csv");
  CHECK(a.monitor_csv() == a.path() / "monitor.csv");
  CHECK(a.eval_csv() == a.path() / "eval.csv");
  CHECK(a.trainer_state() == a.path() / "trainer_state.safetensors");
  CHECK(a.latest_checkpoint() == a.path() / "checkpoints" / "latest.safetensors");
  CHECK(a.best_checkpoint() == a.path() / "checkpoints" / "best.safetensors");
  CHECK(a.step_checkpoint(45056) == a.path() / "checkpoints" / "step_45056.safetensors");
}

TEST_CASE("RunDir writes config.yaml and opens only run directories") {
  TempDir tmp("run_dir_test");
  const RunDir run = RunDir::create(tmp.path, "x");
  // Not a run directory until config.yaml is there.
  const std::string msg = error_of([&] { RunDir::open(run.path()); });
  CHECK(msg.find(run.path().string()) != std::string::npos);
  CHECK(msg.find("config.yaml") != std::string::npos);
  CHECK(error_of([&] { RunDir::open(tmp.path / "missing"); }).find("missing") != std::string::npos);

  run.write_config("env:\n  id: CartPole-v1\n");
  run.write_config("env:\n  id: Pendulum-v1\n");
  CHECK(read_all(run.config_yaml()) == "env:\n  id: Pendulum-v1\n");
  // Only config.yaml and checkpoints/: no temp file left behind.
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(run.path())) ++entries;
  CHECK(entries == 2);

  fs::remove_all(run.checkpoints_dir());
  const RunDir opened = RunDir::open(run.path());
  CHECK(opened.path() == run.path());
  CHECK(fs::is_directory(opened.checkpoints_dir()));
}

TEST_CASE("CsvLog writes the header and round-trippable rows") {
  TempDir tmp("run_dir_test");
  const fs::path p = tmp.path / "progress.csv";
  {
    CsvLog log = CsvLog::create(p, {"env_steps", "return_mean", "note", "lr"});
    log.row(int64_t{1024}, 0.1, "plain", 3e-4f);
    log.row(2048, std::optional<double>(), "a,b", 1e-20);
    log.row(size_t{4096}, std::numeric_limits<double>::quiet_NaN(), "say \"hi\"", -0.0);
    CHECK(log.rows() == 3);
    CHECK_THROWS_AS(log.row(1, 2), std::invalid_argument);
    // Flushed per row: the bytes are in the file while the log is still open.
    CHECK(read_all(p) ==
          "env_steps,return_mean,note,lr\n"
          "1024,0.1,plain,0.0003\n"
          "2048,,\"a,b\",1e-20\n"
          "4096,nan,\"say \"\"hi\"\"\",-0\n");
  }
  // Shortest form still round-trips.
  const double x = 0.1 + 0.2;
  CHECK(std::stod(CsvField(x).text()) == x);
  CHECK(error_of([&] { CsvLog::create(p, {"a"}); }).find("exists") != std::string::npos);
}

TEST_CASE("CsvLog resume keeps the rows before the checkpoint and appends") {
  TempDir tmp("run_dir_test");
  const fs::path p = tmp.path / "eval.csv";
  const std::vector<std::string> header = {"env_steps", "name"};
  {
    CsvLog log = CsvLog::create(p, header);
    log.row(1, "one");
    log.row(2, "two\nlines");  // a quoted line break is inside one row
    log.row(3, "three");
  }
  // A crash cut the last row short.
  write_all(p, read_all(p) + "4,fo");
  {
    CsvLog log = CsvLog::open_for_resume(p, header, 2);
    CHECK(log.rows() == 2);
    log.row(3, "three again");
  }
  CHECK(read_all(p) == "env_steps,name\n1,one\n2,\"two\nlines\"\n3,three again\n");

  // keep_rows beyond what the file holds, or a different header, is a clear error.
  const std::string few = error_of([&] { CsvLog::open_for_resume(p, header, 9); });
  CHECK(few.find(p.string()) != std::string::npos);
  CHECK(few.find("3 complete row") != std::string::npos);
  const std::string bad = error_of([&] { CsvLog::open_for_resume(p, {"env_steps", "x"}, 1); });
  CHECK(bad.find("env_steps,name") != std::string::npos);
  CHECK(bad.find("env_steps,x") != std::string::npos);
  CHECK(read_all(p) == "env_steps,name\n1,one\n2,\"two\nlines\"\n3,three again\n");

  // A run stopped before its first row may have no file yet.
  CsvLog fresh = CsvLog::open_for_resume(tmp.path / "new.csv", header, 0);
  CHECK(read_all(tmp.path / "new.csv") == "env_steps,name\n");
}

TEST_CASE("python_round6_repr prints floats as Python repr of round to 6 digits") {
  CHECK(python_round6_repr(500.0) == "500.0");
  CHECK(python_round6_repr(2.9004321) == "2.900432");
  CHECK(python_round6_repr(0.1) == "0.1");
  CHECK(python_round6_repr(-12.5) == "-12.5");
  CHECK(python_round6_repr(1e-7) == "0.0");
  CHECK(python_round6_repr(3.0000005) == "3.000001");
  CHECK(python_round6_repr(0.0078125) == "0.007812");  // exact tie: half to even
  CHECK(python_round6_repr(1e16) == "1e+16");
  CHECK(python_round6_repr(-0.0) == "-0.0");
  CHECK(python_float_repr(1614621122.3441029) == "1614621122.3441029");
  CHECK(python_float_repr(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(python_float_repr(std::numeric_limits<double>::quiet_NaN()) == "nan");
}

TEST_CASE("MonitorLog writes the SB3 Monitor format") {
  TempDir tmp("run_dir_test");
  const fs::path p = tmp.path / "monitor.csv";
  const double before =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  MonitorLog log = MonitorLog::create(p, "CartPole-v1");
  log.episode(500.0, 500);
  log.episode(-1.23456789, 7);
  const std::string text = read_all(p);

  // Line 1: '#' then json.dumps({"t_start": ..., "env_id": ...}).
  const size_t nl = text.find('\n');
  const std::string first = text.substr(0, nl);
  CHECK(first.rfind("#{\"t_start\": ", 0) == 0);
  const std::string tail = ", \"env_id\": \"CartPole-v1\"}";
  REQUIRE(first.size() > tail.size() + 13);
  CHECK(first.substr(first.size() - tail.size()) == tail);
  const double t_start = std::stod(first.substr(13));
  CHECK(t_start == log.t_start());
  CHECK(t_start >= before);
  CHECK(t_start < before + 60);

  // Then csv.DictWriter's lines: header r,l,t and one row per episode, "\r\n" endings.
  std::istringstream rest(text.substr(nl + 1));
  std::string header, row1, row2, extra;
  std::getline(rest, header);
  std::getline(rest, row1);
  std::getline(rest, row2);
  CHECK(header == "r,l,t\r");
  CHECK(row1.rfind("500.0,500,", 0) == 0);
  CHECK(row2.rfind("-1.234568,7,", 0) == 0);
  CHECK(row2.back() == '\r');
  // t: seconds since t_start, at most 6 decimals.
  const std::string t = row2.substr(12, row2.size() - 13);
  CHECK(std::stod(t) >= 0);
  CHECK(std::stod(t) < 60);
  // Python's repr: "0.000123" style, or "5e-06" below 1e-4 (a fast machine writes both episodes
  // within microseconds), so the 6-decimal rounding shows as the digits after the dot when there
  // is one.
  const size_t dot = t.find('.');
  if (t.find('e') == std::string::npos) {
    REQUIRE(dot != std::string::npos);
    CHECK(t.size() - dot - 1 <= 6);
  } else {
    CHECK(std::stod(t) < 1e-4);
  }
  CHECK(!std::getline(rest, extra));

  // Resume keeps t_start and the first row.
  {
    MonitorLog resumed = MonitorLog::open_for_resume(p, 1);
    CHECK(resumed.t_start() == log.t_start());
    CHECK(resumed.rows() == 1);
    resumed.episode(9.5, 10);
  }
  const std::string after = read_all(p);
  CHECK(after.rfind(text.substr(0, text.find(row2)), 0) == 0);
  CHECK(after.find("9.5,10,") != std::string::npos);
  CHECK(after.find("-1.234568") == std::string::npos);

  write_all(tmp.path / "bad.csv", "r,l,t\n1.0,1,0.1\n");
  CHECK(error_of([&] {
          MonitorLog::open_for_resume(tmp.path / "bad.csv", 0);
        }).find("Monitor header") != std::string::npos);
}

TEST_CASE("progress_line formats steps fps return and ETA") {
  CHECK(progress_line({45056, 100000, 12345, 187.3, 3.6}) ==
        "[ 45%] 45,056/100,000 steps | 12,345 fps | return 187.3 | elapsed 0:04 | ETA 0:04");
  CHECK(progress_line({0, 1000000, 0, std::nullopt, 0}) ==
        "[  0%] 0/1,000,000 steps | 0 fps | return - | elapsed 0:00 | ETA ?");
  CHECK(progress_line({100000, 100000, 999.6, -0.02134, 7384}) ==
        "[100%] 100,000/100,000 steps | 1,000 fps | return -0.0213 | elapsed 2:03:04 | ETA 0:00");
  CHECK(progress_line({99999, 100000, 1, 12.345, 59.4}).find("[ 99%]") == 0);
  CHECK(group_thousands(0) == "0");
  CHECK(group_thousands(999) == "999");
  CHECK(group_thousands(1000) == "1,000");
  CHECK(group_thousands(-1234567) == "-1,234,567");
  CHECK(format_duration(59.6) == "1:00");
  CHECK(format_duration(3600) == "1:00:00");
}
