// The recurrent core's spec as a checkpoint records it: metadata keys {prefix}cell, input,
// hidden, layers and cell_clip ("core.cell" = "lstm", ... with the policy's prefix "core."),
// beside the canonical tensors {prefix}weight_ih_l0, ... (canonical_weights.h).
#pragma once

#include <string>

#include "policy/checkpoint.h"
#include "policy/core_spec.h"

namespace recur::policy::convert {

// Writes {prefix}cell, input, hidden, layers and, when set, cell_clip.
void write_core_metadata(const CoreSpec& spec, Checkpoint& checkpoint,
                         const std::string& prefix = "core.");

// The spec from the metadata when {prefix}cell is there (each key then required and checked);
// else inferred from the canonical tensors' shapes: hidden and gates from weight_hh_l0
// (G*H, H), input from weight_ih_l0, layers from how many consecutive weight_ih_l{k} exist. A
// one-gate core is ambiguous (rnn_tanh or rnn_relu) and needs the metadata. Throws
// recur::Error naming the key or tensor at fault.
CoreSpec read_core_spec(const Checkpoint& checkpoint, const std::string& prefix = "core.");

}  // namespace recur::policy::convert
