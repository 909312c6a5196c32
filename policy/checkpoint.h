// Portable checkpoints in the safetensors format: an 8-byte little-endian header length N, a
// JSON header of N bytes ({"name": {"dtype": "F32", "shape": [...], "data_offsets": [b, e]},
// ..., "__metadata__": {"key": "string", ...}}), then the raw little-endian tensor bytes.
// Tensor names are canonical (core.weight_ih_l0, encoder.0.weight, actor.weight, ...), so the
// file loads into PyTorch (safetensors.torch.load_file + load_state_dict).
//
// Writes are atomic: a temp file in the same directory, fsync, rename, fsync of the directory;
// a crash never leaves a half-written file under the real name.
// Loads validate everything before trusting it (header length within the file and bounded,
// JSON well formed, known dtypes, shapes and offsets consistent, inside the data area, no
// overlaps, no gaps) and throw recur::Error naming the file and what is wrong. A malformed or
// hostile file never crashes the process, and nothing is allocated from a size the file claims:
// tensor data is allocated only after its offsets are checked against the bytes present (so at
// most the file's size), and the header's entries cost memory in proportion to the header's
// length (at most 100 MB, the reference implementation's limit; a header packed with tiny
// metadata entries costs about 10x its length as std::map nodes).
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "policy/tensor.h"

namespace recur::policy {

struct Checkpoint {
  TensorMap tensors;                            // float32 only
  std::map<std::string, std::string> metadata;  // safetensors "__metadata__" (string -> string)
  bool operator==(const Checkpoint&) const = default;
};

// Serializes to bytes / parses bytes (the loader's validation lives in parse_safetensors;
// `source` names the origin in error messages).
std::string serialize_safetensors(const Checkpoint& checkpoint);
Checkpoint parse_safetensors(std::string_view bytes, const std::string& source);

void save_checkpoint(const std::filesystem::path& path, const Checkpoint& checkpoint);
// Parses the file and refuses a tensor holding a NaN or an infinity (check_finite below): recur
// never writes one, and such weights act as garbage without any other error.
Checkpoint load_checkpoint(const std::filesystem::path& path);

// Throws recur::Error naming `source`, the tensor, the value and its index when a tensor holds a
// NaN or an infinity.
void check_finite(const TensorMap& tensors, const std::string& source);

}  // namespace recur::policy
