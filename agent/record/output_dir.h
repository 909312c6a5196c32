// Output directories of recording commands: created and checked for writing before any episode
// runs, and removed again when a failed command created them and left nothing but directories
// (so a failure writes nothing).
#pragma once

#include <filesystem>
#include <string>

namespace recur::agent::record {

// Creates `dir` if missing and checks that files can be written in it; recur::Error naming
// `what` ("--video", "video directory") and the reason otherwise.
void prepare_output_dir(const std::filesystem::path& dir, const std::string& what);

// The outermost directory that creating `path` would add ("" when `path` exists).
std::filesystem::path first_missing(const std::filesystem::path& path);

// Removes `dir` when it holds directories only (what a failed command created and left empty).
void remove_if_only_directories(const std::filesystem::path& dir);

}  // namespace recur::agent::record
