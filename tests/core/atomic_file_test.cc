// Atomic writes and the temp files of killed writers (core/atomic_file.h).
#include "core/atomic_file.h"

#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "tests/support/temp_dir.h"

using namespace recur;
using recur::test::TempDir;
namespace fs = std::filesystem;

namespace {

// The pid of a process that has exited (and been reaped), so that kill(pid, 0) fails with ESRCH.
int dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

void touch(const fs::path& p, const std::string& text = "partial") {
  recur::test::write_all(p, text);
}

}  // namespace

TEST_CASE("atomic_file: temp names are parsed back") {
  auto t = parse_temp_name(".rl-video-episode-8.mp4.tmp.1234.5");
  REQUIRE(t);
  CHECK(t->target == "rl-video-episode-8.mp4");
  CHECK(t->pid == 1234);
  CHECK_FALSE(t->old);
  t = parse_temp_name(".random-v0.old.77.0");
  REQUIRE(t);
  CHECK(t->target == "random-v0");
  CHECK(t->old);
  CHECK(parse_temp_name(".x.tmp.42"));  // no counter
  for (const char* not_temp : {"latest.safetensors", ".tmp.12", ".x.tmp.", ".x.tmp.12a",
                               ".x.tmp.1.2.3", "x.tmp.12", ".recur-write-check"})
    CHECK_MESSAGE(!parse_temp_name(not_temp), not_temp);
  const fs::path p = temp_path_for("/a/b/latest.safetensors");
  CHECK(p.parent_path() == "/a/b");
  t = parse_temp_name(p.filename().string());
  REQUIRE(t);
  CHECK(t->target == "latest.safetensors");
  CHECK(t->pid == ::getpid());
}

TEST_CASE("atomic_file: stale temps of dead writers go, those of live ones stay") {
  TempDir tmp("atomic_file_test");
  const int dead = dead_pid();
  const fs::path stale_video = tmp.path / fmt::format(".rl-video-episode-8.mp4.tmp.{}.0", dead);
  const fs::path live_video =
      tmp.path / fmt::format(".rl-video-episode-1.mp4.tmp.{}.3", ::getpid());
  const fs::path other = tmp.path / fmt::format(".progress.csv.tmp.{}.0", dead);
  const fs::path stale_dir = tmp.path / fmt::format(".random-v0.tmp.{}.1", dead);
  touch(stale_video);
  touch(live_video);
  touch(other);
  fs::create_directories(stale_dir / "data");
  touch(stale_dir / "data" / "main_data.hdf5");
  touch(tmp.path / "rl-video-episode-0.mp4", "a finished video");

  // Only the targets asked for: "*.mp4" leaves the csv temp and the dataset directory.
  auto removed = remove_stale_temps(tmp.path, "*.mp4");
  CHECK(removed == std::vector<fs::path>{stale_video});
  CHECK(fs::exists(live_video));
  CHECK(fs::exists(other));
  CHECK(fs::exists(tmp.path / "rl-video-episode-0.mp4"));
  removed = remove_stale_temps(tmp.path, "random-v0");
  CHECK(removed == std::vector<fs::path>{stale_dir});
  CHECK_FALSE(fs::exists(stale_dir));
  remove_stale_temps(tmp.path, "*");
  CHECK_FALSE(fs::exists(other));
  CHECK(fs::exists(live_video));  // its writer (this process) is alive
  CHECK(fs::exists(tmp.path / "rl-video-episode-0.mp4"));
  CHECK(remove_stale_temps(tmp.path / "missing", "*").empty());  // never throws
}

TEST_CASE("atomic_file: a dataset moved aside by a writer that died is put back") {
  TempDir tmp("atomic_file_test");
  const int dead = dead_pid();
  const fs::path old = tmp.path / fmt::format(".random-v0.old.{}.0", dead);
  fs::create_directories(old / "data");
  touch(old / "data" / "metadata.json", "{}");
  remove_stale_temps(tmp.path, "random-v0");
  CHECK(fs::exists(tmp.path / "random-v0" / "data" / "metadata.json"));
  CHECK_FALSE(fs::exists(old));
  // With the target in place, an old copy is only removed.
  fs::create_directories(old);
  remove_stale_temps(tmp.path, "random-v0");
  CHECK_FALSE(fs::exists(old));
  CHECK(fs::exists(tmp.path / "random-v0" / "data" / "metadata.json"));
}

TEST_CASE("atomic_file: write_file_atomic replaces the file and removes its stale temps") {
  TempDir tmp("atomic_file_test");
  const fs::path target = tmp.path / "trainer_state.safetensors";
  const fs::path stale = tmp.path / fmt::format(".trainer_state.safetensors.tmp.{}.9", dead_pid());
  touch(stale);
  write_file_atomic(target, "one");
  write_file_atomic(target, "two");
  CHECK(recur::test::read_all(target) == "two");
  CHECK_FALSE(fs::exists(stale));
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(tmp.path)) ++entries;
  CHECK(entries == 1);
  const std::string e =
      recur::test::error_of([&] { write_file_atomic(tmp.path / "missing" / "x", "x"); });
  CHECK(e.find((tmp.path / "missing").string()) != std::string::npos);
}
