// Atomic file writes: the bytes go to a temp file in the target's directory, are flushed and
// fsynced, renamed over the target and the directory is fsynced, so a crash never leaves a
// half-written file under the real name (checkpoints, trainer state, resolved configs).
#pragma once

#include <filesystem>
#include <string_view>

namespace recur {

// Throws recur::Error naming the path and the system's reason; the temp file is removed then.
void write_file_atomic(const std::filesystem::path& path, std::string_view bytes);

}  // namespace recur
