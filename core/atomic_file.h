// Atomic file writes: the bytes go to a temp file in the target's directory, are flushed and
// fsynced, renamed over the target and the directory is fsynced, so a crash never leaves a
// half-written file under the real name (checkpoints, trainer state, resolved configs).
//
// Temp names. Every recur writer that renames into place (write_file_atomic, VideoWriter,
// MinariWriter) names its temp "<dir>/.<target>.tmp.<pid>.<n>": hidden from players and listings,
// in the target's directory (rename() stays on one file system), and marked with the writer's
// pid, so that the next writer of the same target can tell a temp of a killed process (removed,
// with a warning) from one that a live process is still writing (left alone). MinariWriter's
// replaced datasets wait under "<dir>/.<target>.old.<pid>.<n>" where renameat2 cannot swap.
// The pid test assumes writers share the machine and pid namespace (not an NFS directory written
// from several hosts).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace recur {

// Throws recur::Error naming the path and the system's reason (ENOSPC: "No space left on
// device"); the temp file is removed then. Stale temps of `path` are removed first.
void write_file_atomic(const std::filesystem::path& path, std::string_view bytes);

// A fresh temp name for `path`: "<dir>/.<name>.tmp.<pid>.<n>".
std::filesystem::path temp_path_for(const std::filesystem::path& path);

// Moves a finished temp file into place: fsyncs it, renames it over `path`, fsyncs the directory.
// Throws recur::Error naming the file (the temp stays; the caller removes it).
void commit_temp_file(const std::filesystem::path& temp, const std::filesystem::path& path);

// A temp name taken apart: ".<target>.tmp.<pid>[.<n>]" or ".<target>.old.<pid>[.<n>]".
struct TempName {
  std::string target;
  int pid = 0;
  bool old = false;  // ".old.": a previous version moved aside, not a new one being written
};
std::optional<TempName> parse_temp_name(std::string_view file_name);

// Removes the temp files and directories in `dir` (not below) whose writer process no longer
// exists (kill(pid, 0) fails with ESRCH), for targets matching `target`: a file name, "*.ext" (a
// suffix) or "*" (any). A ".old." entry whose target is missing is renamed back instead (the
// writer died between moving the old version aside and the new one in). Logs a warning per entry;
// returns the removed paths. Never throws (what cannot be removed is logged and left).
std::vector<std::filesystem::path> remove_stale_temps(const std::filesystem::path& dir,
                                                      std::string_view target);

}  // namespace recur
