// libFuzzer harness for the TensorBoard event-file reader, read_tensorboard_scalars (what
// tests and tools use to read a run's tb/ directory back). The input is written to a file of
// this process's own and read. Mutations almost never keep TFRecord's two CRC-32C per record
// right, so when the first input byte is odd the harness writes the correct CRCs into every
// record it can frame before writing the file (the CRC checks themselves are fuzzed by the even
// inputs). Every input must be read or throw recur::Error; anything else is a bug.
#include <cstring>

#include <google/protobuf/stubs/logging.h>

#include "agent/run/tensorboard.h"
#include "core/error.h"
#include "tools/fuzz/fuzz_util.h"

namespace {

uint64_t load_le(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}
void store_le(char* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<char>(v >> (8 * i));
}
uint32_t masked(const char* p, size_t n) {
  return recur::agent::mask_crc32c(recur::agent::crc32c({p, n}));
}

// Rewrites the length CRC and data CRC of each whole record, first to last.
void fix_crcs(std::string& bytes) {
  size_t pos = 0;
  while (bytes.size() - pos >= 12) {
    char* p = bytes.data() + pos;
    store_le(p + 8, masked(p, 8), 4);
    const uint64_t n = load_le(p, 8);
    if (n > bytes.size() - pos - 12 || bytes.size() - pos - 12 - n < 4) return;
    store_le(p + 12 + n, masked(p + 12, n), 4);
    pos += 12 + n + 4;
  }
}

}  // namespace

// protobuf logs every string field that is not UTF-8 to stderr; the reader rejects those records
// (ParseFromArray fails), so the log only buries libFuzzer's own output.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string bytes(recur::fuzz::as_text(data + 1, size - 1));
  if (data[0] & 1) fix_crcs(bytes);
  const auto path = recur::fuzz::scratch_dir() / "events.out.tfevents.fuzz";
  recur::fuzz::write_file(path, bytes);
  try {
    recur::agent::read_tensorboard_scalars(path);
  } catch (const recur::Error&) {
    // Rejecting a corrupt file is the expected outcome.
  }
  return 0;
}
