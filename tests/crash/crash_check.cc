// Checks what a recur command left on disk after it was killed (SIGKILL at a random moment) or ran
// out of space: every file that exists under its final name is valid and complete. Used by
// tests/crash/kill_loop.sh and full_disk.sh; needs no Python.
//
//   crash_check run DIR [--finished] [--stride N]   a training run directory
//   crash_check videos DIR [--no-temps]             MP4s (recur record/eval --video)
//   crash_check dataset ROOT ID [--no-temps]        a Minari dataset ROOT/ID
//
// run: config.yaml is not empty; every checkpoint loads; trainer_state parses and names the env
// step of the latest checkpoint (its own or its previous generation: what a resume needs);
// progress.csv, eval.csv and monitor.csv hold complete rows with the header's field count, except
// perhaps a partial last row; every TensorBoard event file reads up to its last complete record;
// every video decodes. Prints "env_steps N" (the latest checkpoint's). With --finished (after a
// run that was not killed, e.g. the resume that ends a kill loop) no partial row or record, no
// temp file anywhere, and the logs continue without duplicated or lost rows: progress.csv's
// env_steps are N, 2N, 3N, ... (N = --stride), TensorBoard holds each progress row's and eval
// row's step exactly once per tag, and every tag's steps increase.
// videos / dataset: every final-named file is complete; --no-temps: no temp file or directory of
// a writer is left (after a run that finished into the same target).
// Exit status 0 when every check passed, 1 otherwise (each failure printed as "FAIL: ...").
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "agent/record/hdf5.h"
#include "agent/record/video_writer.h"
#include "agent/run/tensorboard.h"
#include "policy/checkpoint.h"
#include "policy/policy_checkpoint.h"

namespace fs = std::filesystem;
using namespace recur;

namespace {

int failures = 0;

template <typename... Args>
void fail(fmt::format_string<Args...> f, Args&&... args) {
  fmt::print("FAIL: {}\n", fmt::format(f, std::forward<Args>(args)...));
  ++failures;
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return std::move(ss).str();
}

// A writer's temp name: ".<target>.tmp.<digits>..." or ".<target>.old.<digits>...".
bool is_temp_name(const std::string& name) {
  if (name.empty() || name[0] != '.') return false;
  for (const char* kind : {".tmp.", ".old."}) {
    const size_t at = name.rfind(kind);
    if (at != std::string::npos && at > 1 && at + 5 < name.size() &&
        std::isdigit(static_cast<unsigned char>(name[at + 5])))
      return true;
  }
  return false;
}

std::vector<fs::path> temps_under(const fs::path& dir, bool recursive) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  if (recursive) {
    for (auto it = fs::recursive_directory_iterator(dir, ec); it != fs::end(it); it.increment(ec)) {
      if (is_temp_name(it->path().filename().string())) {
        out.push_back(it->path());
        if (it->is_directory(ec)) it.disable_recursion_pending();
      }
    }
  } else {
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (is_temp_name(e.path().filename().string())) out.push_back(e.path());
  }
  return out;
}

void check_no_temps(const fs::path& dir, bool recursive) {
  for (const fs::path& p : temps_under(dir, recursive))
    fail("{} is a writer's temp file left behind", p.string());
}

// Rows of a CSV log after `head` header lines; fields split at commas (recur's logs quote
// nothing). `eol` is the line ending. A partial last row is reported, and is a failure when
// `finished`.
std::vector<std::vector<std::string>> csv_rows(const fs::path& path, int head, size_t fields,
                                               const std::string& eol, bool finished) {
  std::vector<std::vector<std::string>> rows;
  const std::string bytes = read_all(path);
  size_t pos = 0;
  for (int i = 0; i < head; ++i) {
    const size_t nl = bytes.find('\n', pos);
    if (nl == std::string::npos) {
      // A run killed while creating the file: the header itself can be cut short only by a
      // partial write, which a single write() of a few bytes never is.
      fail("{}: the header is incomplete ({} bytes)", path.string(), bytes.size());
      return rows;
    }
    pos = nl + 1;
  }
  while (pos < bytes.size()) {
    const size_t end = bytes.find(eol, pos);
    if (end == std::string::npos) {
      if (finished)
        fail("{}: a partial last row at byte {}: '{}'", path.string(), pos, bytes.substr(pos));
      else
        fmt::print("note: {} ends in a partial row (a resume drops it)\n", path.string());
      break;
    }
    std::vector<std::string> row;
    std::string line = bytes.substr(pos, end - pos);
    size_t s = 0;
    for (;;) {
      const size_t c = line.find(',', s);
      row.push_back(line.substr(s, c == std::string::npos ? std::string::npos : c - s));
      if (c == std::string::npos) break;
      s = c + 1;
    }
    if (row.size() != fields)
      fail("{}: row {} has {} fields, {} expected: '{}'", path.string(), rows.size() + 1,
           row.size(), fields, line);
    rows.push_back(std::move(row));
    pos = end + eol.size();
  }
  return rows;
}

std::vector<int64_t> column0(const std::vector<std::vector<std::string>>& rows) {
  std::vector<int64_t> out;
  for (const auto& r : rows) out.push_back(std::stoll(r.at(0)));
  return out;
}

void check_videos(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name[0] == '.' || e.path().extension() != ".mp4") continue;
    try {
      const auto probe = agent::record::probe_video(e.path().string());
      if (probe.frames < 1) fail("{}: no frames", e.path().string());
      ++n;
    } catch (const std::exception& err) {
      fail("{} ({} bytes) is not a complete video: {}", e.path().string(),
           fs::file_size(e.path(), ec), err.what());
    }
  }
  fmt::print("videos: {} complete in {}\n", n, dir.string());
}

int check_run(const fs::path& dir, bool finished, int64_t stride) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    fail("{} is not a directory", dir.string());
    return 1;
  }
  if (fs::exists(dir / "config.yaml") && fs::file_size(dir / "config.yaml") == 0)
    fail("{}/config.yaml is empty", dir.string());

  // Checkpoints.
  std::optional<int64_t> latest_steps;
  for (const auto& e : fs::directory_iterator(dir / "checkpoints", ec)) {
    const std::string name = e.path().filename().string();
    if (name[0] == '.') continue;
    try {
      if (name.starts_with("algorithm_state-")) {  // the trainer state's tensors, no policy
        policy::load_checkpoint(e.path());
        continue;
      }
      const auto ckpt = policy::load_policy(e.path());
      if (name == "latest.safetensors")
        latest_steps = std::stoll(ckpt.metadata.at("run.env_steps"));
    } catch (const std::exception& err) {
      fail("checkpoint {} does not load: {}", e.path().string(), err.what());
    }
  }

  // The trainer state, and whether a resume finds the generation of the latest checkpoint.
  const fs::path state_path = dir / "trainer_state.safetensors";
  if (fs::exists(state_path)) {
    const nlohmann::json state = nlohmann::json::parse(read_all(state_path), nullptr, false);
    if (state.is_discarded() || !state.contains("trainer") || !state.contains("job")) {
      fail("{} is not a valid trainer state", state_path.string());
    } else if (latest_steps) {
      const int64_t s = state["job"].at("env_steps");
      const bool prev = state.contains("previous") &&
                        state["previous"]["job"].at("env_steps").get<int64_t>() == *latest_steps;
      if (s != *latest_steps && !prev)
        fail(
            "{}: the trainer state is at {} env steps and the latest checkpoint at {}: a resume "
            "would refuse the run",
            dir.string(), s, *latest_steps);
      // The generation a resume picks must find its tensor file (loaded above if present).
      const nlohmann::json& picked = s == *latest_steps ? state : state["previous"];
      if (picked.contains("trainer_tensors") &&
          !fs::exists(dir / "checkpoints" / picked["trainer_tensors"].get<std::string>()))
        fail("{}: the trainer state at {} env steps names {}, which is not in checkpoints/",
             dir.string(), *latest_steps, picked["trainer_tensors"].get<std::string>());
    }
  }
  if (latest_steps) fmt::print("env_steps {}\n", *latest_steps);

  // Logs.
  std::vector<int64_t> progress_steps, eval_steps;
  if (fs::exists(dir / "progress.csv"))
    progress_steps = column0(csv_rows(dir / "progress.csv", 1, 21, "\n", finished));
  if (fs::exists(dir / "eval.csv"))
    eval_steps = column0(csv_rows(dir / "eval.csv", 1, 5, "\n", finished));
  if (fs::exists(dir / "monitor.csv")) csv_rows(dir / "monitor.csv", 2, 3, "\r\n", finished);

  // TensorBoard, file by file.
  std::map<std::string, std::vector<int64_t>> steps_by_tag;
  std::vector<fs::path> event_files;
  for (const auto& e : fs::directory_iterator(dir / "tb", ec))
    if (e.path().filename().string().find("tfevents") != std::string::npos)
      event_files.push_back(e.path());
  std::sort(event_files.begin(), event_files.end());
  for (const fs::path& f : event_files) {
    // Every complete record is checked; a killed writer may leave a partial last one.
    try {
      for (const auto& s : agent::read_tensorboard_scalars(f, /*partial_tail_ok=*/!finished))
        steps_by_tag[s.tag].push_back(s.step);
    } catch (const std::exception& err) {
      fail("{}: {}", f.string(), err.what());
    }
  }
  fmt::print("tensorboard: {} file(s), {} tag(s)\n", event_files.size(), steps_by_tag.size());

  check_videos(dir / "videos");

  if (finished) {
    check_no_temps(dir, true);
    for (size_t i = 0; i < progress_steps.size(); ++i)
      if (stride > 0 && progress_steps[i] != stride * static_cast<int64_t>(i + 1)) {
        fail("progress.csv row {} is at env step {}, {} expected (rows duplicated or lost)", i + 1,
             progress_steps[i], stride * static_cast<int64_t>(i + 1));
        break;
      }
    for (size_t i = 1; i < eval_steps.size(); ++i)
      if (eval_steps[i] <= eval_steps[i - 1])
        fail("eval.csv row {} is at env step {} after {}", i + 1, eval_steps[i], eval_steps[i - 1]);
    if (!event_files.empty()) {
      for (const auto& [tag, steps] : steps_by_tag)
        for (size_t i = 1; i < steps.size(); ++i)
          if (steps[i] <= steps[i - 1]) {
            fail("tensorboard tag {}: step {} after {} (duplicated records)", tag, steps[i],
                 steps[i - 1]);
            break;
          }
      if (steps_by_tag["train/value_loss"] != progress_steps)
        fail("tensorboard train/value_loss has {} steps, progress.csv {} rows: they differ",
             steps_by_tag["train/value_loss"].size(), progress_steps.size());
      if (steps_by_tag["eval/mean_reward"] != eval_steps)
        fail("tensorboard eval/mean_reward has {} steps, eval.csv {} rows: they differ",
             steps_by_tag["eval/mean_reward"].size(), eval_steps.size());
    }
    fmt::print("progress rows {}, eval rows {}\n", progress_steps.size(), eval_steps.size());
  } else {
    for (const fs::path& p : temps_under(dir, true))
      fmt::print("note: temp {} (a later writer of the same target removes it)\n", p.string());
  }
  return failures == 0 ? 0 : 1;
}

int check_dataset(const fs::path& root, const std::string& id, bool no_temps) {
  const fs::path ds = root / id;
  std::error_code ec;
  if (fs::exists(ds, ec)) {
    try {
      const nlohmann::json meta = nlohmann::json::parse(read_all(ds / "data" / "metadata.json"));
      const int64_t episodes = meta.at("total_episodes");
      auto file = agent::record::H5File::open_read(ds / "data" / "main_data.hdf5");
      const auto groups = file.children();
      if (static_cast<int64_t>(groups.size()) != episodes)
        fail("{}: {} episode groups, metadata says {}", ds.string(), groups.size(), episodes);
      for (const auto& g : groups) file.group(g).attr_int("total_steps");
      fmt::print("dataset {}: {} episodes\n", ds.string(), episodes);
    } catch (const std::exception& err) {
      fail("dataset {} is not complete: {}", ds.string(), err.what());
    }
  } else {
    fmt::print("dataset {}: absent\n", ds.string());
  }
  if (no_temps) check_no_temps(ds.parent_path(), false);
  return failures == 0 ? 0 : 1;
}

// Prints a run's TensorBoard scalars as "step tag value" lines sorted by step then tag, without the
// wall-clock ones (time/fps, recur/*_time_s), so that two runs' files can be compared with diff.
int print_scalars(const std::filesystem::path& dir) {
  std::vector<std::string> lines;
  for (const auto& e : recur::agent::read_tensorboard_scalars(dir)) {
    if (e.tag == "time/fps" || (e.tag.starts_with("recur/") && e.tag.ends_with("_time_s")))
      continue;
    lines.push_back(fmt::format("{:012d} {} {:.9g}", e.step, e.tag, e.value));
  }
  std::sort(lines.begin(), lines.end());
  for (const auto& l : lines) fmt::print("{}\n", l);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto flag = [&](const std::string& f) {
    for (const auto& a : args)
      if (a == f) return true;
    return false;
  };
  try {
    if (args.size() >= 2 && args[0] == "run") {
      int64_t stride = 0;
      for (size_t i = 0; i + 1 < args.size(); ++i)
        if (args[i] == "--stride") stride = std::stoll(args[i + 1]);
      return check_run(args[1], flag("--finished"), stride);
    }
    if (args.size() >= 2 && args[0] == "videos") {
      check_videos(args[1]);
      if (flag("--no-temps")) check_no_temps(args[1], false);
      return failures == 0 ? 0 : 1;
    }
    if (args.size() >= 2 && args[0] == "scalars") return print_scalars(args[1]);
    if (args.size() >= 3 && args[0] == "dataset")
      return check_dataset(args[1], args[2], flag("--no-temps"));
  } catch (const std::exception& e) {
    fmt::print("FAIL: {}\n", e.what());
    return 1;
  }
  fmt::print(stderr,
             "usage: crash_check run DIR [--finished] [--stride N] | videos DIR [--no-temps] | "
             "dataset ROOT ID [--no-temps] | scalars RUN_DIR/tb\n");
  return 2;
}
