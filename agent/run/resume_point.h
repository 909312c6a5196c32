// A run directory's resume point: its latest checkpoint and the resume file's generation that
// matches it (resume_state.h says why there are two). `recur train --resume` continues a run from
// it; run.init_from of an off-policy algorithm starts a new run from its learner state
// (init_from.h).
#pragma once

#include <string>

#include "agent/run/resume_state.h"
#include "agent/run/run_dir.h"
#include "policy/policy_checkpoint.h"

namespace recur::agent {

struct ResumePoint {
  ResumeState state;                    // the generation of `checkpoint`
  policy::PolicyCheckpoint checkpoint;  // checkpoints/latest.safetensors
};

// Throws recur::Error naming the directory when it has no resume file or no latest checkpoint, or
// when the two belong to different generations; `remedy` ends those messages (what the user
// should do instead, e.g. "start a new run"). Warns when the run stopped while saving and the
// generation before is taken.
ResumePoint read_resume_point(const RunDir& dir, const std::string& remedy);

// The resume state's tensors (a replay buffer, optimizer moments, an off-policy learner's critics),
// or none when the state has no tensor file.
policy::TensorMap load_trainer_tensors(const RunDir& dir, const ResumeState& state);

}  // namespace recur::agent
