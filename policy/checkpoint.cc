// serialize_safetensors and the file side of checkpoints (atomic save, load). The reader's
// validation lives in checkpoint_parse.cc.
#include "policy/checkpoint.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include <fmt/ranges.h>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/finite.h"
#include "policy/safetensors_format.h"

namespace recur::policy {
namespace {

using namespace safetensors;

// JSON for a name or metadata string we write; invalid UTF-8 is the caller's mistake.
std::string json_string(const std::string& s, std::string_view what) {
  try {
    return Json(s).dump();
  } catch (const Json::type_error&) {
    throw std::invalid_argument(
        fmt::format("cannot write checkpoint: {} {} is not valid UTF-8", what, json_quoted(s)));
  }
}

[[noreturn]] void fail_errno(std::string_view what, const std::filesystem::path& path, int err) {
  throw Error(fmt::format("{} {}: {}", what, path.string(), std::strerror(err)));
}

}  // namespace

std::string serialize_safetensors(const Checkpoint& checkpoint) {
  std::string header = "{";
  if (!checkpoint.metadata.empty()) {
    header += "\"__metadata__\":{";
    for (const auto& [k, v] : checkpoint.metadata) {
      if (header.back() != '{') header += ',';
      header += json_string(k, "metadata key") + ':' + json_string(v, "metadata value");
    }
    header += '}';
  }
  uint64_t offset = 0;
  for (const auto& [name, t] : checkpoint.tensors) {
    RECUR_CHECK_ARG(name != kMetadataKey, "cannot write checkpoint: a tensor may not be named {}",
                    json_quoted(name));
    const auto bytes = f32_bytes(t.shape);
    RECUR_CHECK_ARG(bytes && *bytes == t.data.size() * sizeof(float),
                    "cannot write checkpoint: tensor {} has shape [{}] but {} values",
                    json_quoted(name), fmt::join(t.shape, ", "), t.data.size());
    if (header.back() != '{') header += ',';
    header += fmt::format(R"({}:{{"dtype":"F32","shape":[{}],"data_offsets":[{},{}]}})",
                          json_string(name, "tensor name"), fmt::join(t.shape, ","), offset,
                          offset + *bytes);
    offset += *bytes;
  }
  header += '}';
  // Trailing spaces (allowed by the spec) make the data start 8-byte aligned, so a reader can
  // map the file and use the floats in place.
  header.append((kLengthBytes - header.size() % kLengthBytes) % kLengthBytes, ' ');
  RECUR_CHECK_ARG(header.size() <= kMaxHeaderBytes,
                  "cannot write checkpoint: its header would be {} bytes, over the {} bytes that "
                  "safetensors readers accept",
                  header.size(), kMaxHeaderBytes);

  std::string out;
  out.reserve(kLengthBytes + header.size() + offset);
  for (size_t i = 0; i < kLengthBytes; ++i)
    out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  out += header;
  for (const auto& [name, t] : checkpoint.tensors)
    if (!t.data.empty())  // data() of an empty vector may be null
      out.append(reinterpret_cast<const char*>(t.data.data()), t.data.size() * sizeof(float));
  return out;
}

void save_checkpoint(const std::filesystem::path& path, const Checkpoint& checkpoint) {
  const std::string bytes = serialize_safetensors(checkpoint);
  RECUR_CHECK(path.has_filename(), "cannot save checkpoint {}: the path names no file",
              path.string());
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  std::error_code ec;
  const auto dir_status = std::filesystem::status(dir, ec);
  RECUR_CHECK(std::filesystem::exists(dir_status),
              "cannot save checkpoint {}: directory {} does not exist", path.string(),
              dir.string());
  RECUR_CHECK(std::filesystem::is_directory(dir_status),
              "cannot save checkpoint {}: {} is not a directory", path.string(), dir.string());

  // Atomic (temp file, fsync, rename, directory fsync): readers see the old file or the new
  // one, never a half-written one.
  try {
    write_file_atomic(path, bytes);
  } catch (const Error& e) {
    throw Error(fmt::format("cannot save checkpoint {}: {}", path.string(), e.what()));
  }
}

Checkpoint load_checkpoint(const std::filesystem::path& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) fail_errno("cannot open checkpoint", path, errno);
  struct Closer {
    std::FILE* f;
    ~Closer() { std::fclose(f); }
  } closer{f};
  struct stat st {};
  if (::fstat(::fileno(f), &st) != 0) fail_errno("cannot stat checkpoint", path, errno);
  // A device or FIFO has no size to trust and may never end.
  RECUR_CHECK(S_ISREG(st.st_mode), "cannot load checkpoint {}: not a regular file", path.string());
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  const size_t got = std::fread(bytes.data(), 1, bytes.size(), f);
  if (got != bytes.size()) {
    if (std::ferror(f)) fail_errno("cannot read checkpoint", path, errno);
    bytes.resize(got);  // the file shrank while we read it; the parser judges what is there
  }
  Checkpoint checkpoint = parse_safetensors(bytes, path.string());
  check_finite(checkpoint.tensors, path.string());
  return checkpoint;
}

void check_finite(const TensorMap& tensors, const std::string& source) {
  for (const auto& [name, t] : tensors)
    if (const auto bad = first_nonfinite(std::span<const float>(t.data)))
      throw Error(fmt::format(
          "{}: tensor {} holds a non-finite value ({}) at {}; the file is damaged or its weights "
          "come from a diverged run: load an earlier checkpoint (a run directory keeps best, "
          "latest and any periodic ones)",
          source, json_quoted(name), t.data[*bad], describe_index(*bad, t.shape)));
}

}  // namespace recur::policy
