// libFuzzer harness for the safetensors loader (policy checkpoints): parse_safetensors, which
// load_checkpoint calls on a file's bytes. Every input must parse or throw recur::Error;
// anything else (a crash, a sanitizer report, another exception type, an allocation the input's
// size does not justify: -rss_limit_mb) is a bug. A parsed checkpoint must serialize and parse
// back to the same bytes. tools/fuzz/run.sh builds and runs it.
#include "core/error.h"
#include "policy/checkpoint.h"
#include "tools/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const recur::policy::Checkpoint c =
        recur::policy::parse_safetensors(recur::fuzz::as_text(data, size), "fuzz");
    // Compared as bytes: a NaN in the data is not == itself.
    const std::string bytes = recur::policy::serialize_safetensors(c);
    const std::string again =
        recur::policy::serialize_safetensors(recur::policy::parse_safetensors(bytes, "again"));
    if (again != bytes) __builtin_trap();
  } catch (const recur::Error&) {
    // Rejecting malformed input is the expected outcome.
  }
  return 0;
}
