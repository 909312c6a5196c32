// libFuzzer harness for the config loader as `recur train CONFIG --set ...` runs it:
// load_config_text (what load_config calls with the file's text) on a YAML document followed by
// --set overrides. Input: the YAML text, then one override per part after a '\0' byte
// ("algo.gamma=0.9"). Every input must load or throw recur::Error; anything else (a crash, a
// sanitizer report, another exception, a hang) is a bug. tools/fuzz/run.sh builds and runs it.
#include "agent/config/yaml.h"
#include "core/error.h"
#include "tools/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> parts = recur::fuzz::split(recur::fuzz::as_text(data, size), '\0');
  const std::string yaml = std::move(parts.front());
  parts.erase(parts.begin());
  try {
    const recur::agent::TrainConfig config =
        recur::agent::load_config_text(yaml, "fuzz.yaml", parts);
    // A loaded config prints and reads back as itself (the run directory's config.yaml).
    const std::string text = recur::agent::to_yaml(config);
    if (recur::agent::to_yaml(recur::agent::load_config_text(text, "resolved.yaml", {})) != text)
      __builtin_trap();
  } catch (const recur::Error&) {
    // Rejecting the input with a message is the expected outcome.
  }
  return 0;
}
