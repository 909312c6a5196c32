// libFuzzer harness for what `recur train --resume` reads from trainer_state.safetensors (a JSON
// file, agent/run/resume_state.h): parse_resume_file on the whole file, then parse_trainer_state
// on each rank's embedded text. Inputs whose first byte is '!' go to parse_trainer_state
// directly (the rank text is JSON inside a JSON string, which mutations rarely keep valid).
// Every input must parse or throw recur::Error; anything else is a bug.
#include "agent/ppo/trainer_state.h"
#include "agent/run/resume_state.h"
#include "core/error.h"
#include "tools/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = recur::fuzz::as_text(data, size);
  try {
    if (!text.empty() && text.front() == '!') {
      recur::agent::parse_trainer_state(std::string(text.substr(1)));
      return 0;
    }
    const recur::agent::ResumeFile file =
        recur::agent::parse_resume_file(std::string(text), "fuzz");
    for (const std::string& rank : file.current.trainer_states)
      recur::agent::parse_trainer_state(rank);
  } catch (const recur::Error&) {
    // Rejecting the input with a message is the expected outcome.
  }
  return 0;
}
