// libFuzzer target for the safetensors loader: any input must parse or throw recur::Error.
// Anything else (a crash, a sanitizer report, another exception type, a huge allocation) is a
// bug. Not part of the CMake build: libFuzzer needs clang, and the fuzzer runs for as long as
// one lets it.
//
// Build (Debian 12: apt-get install -y clang libclang-rt-14-dev nlohmann-json3-dev libfmt-dev),
// from the repository root:
//
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined \
//       -fno-sanitize-recover=undefined -I. \
//       tools/fuzz/checkpoint_fuzzer.cc policy/checkpoint_parse.cc core/error.cc -lfmt \
//       -o /tmp/checkpoint_fuzzer
//
// Run (a corpus directory to keep what it finds; -rss_limit_mb catches allocations that the
// file's size does not justify):
//
//   mkdir -p /tmp/ckpt_corpus
//   /tmp/checkpoint_fuzzer -max_total_time=60 -max_len=4096 -rss_limit_mb=512 /tmp/ckpt_corpus
//
// A seed from a real checkpoint helps it past the header length quickly: save one with
// recur::policy::save_checkpoint (or Python's safetensors.numpy.save_file) into the corpus.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/error.h"
#include "policy/checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    recur::policy::parse_safetensors(std::string_view(reinterpret_cast<const char*>(data), size),
                                     "fuzz");
  } catch (const recur::Error&) {
    // Rejecting malformed input is the expected outcome.
  }
  return 0;
}
