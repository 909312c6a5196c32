// The graph's declared inputs and outputs (policy/convert/onnx.h): plain data, so that it is
// built without libonnx too and the docs, tests and the export share one list.
#include <string>

#include <fmt/format.h>

#include "policy/convert/onnx.h"

namespace recur::policy::convert {

OnnxInterface onnx_interface(const PolicySpec& spec) {
  const std::string b = "batch", L = std::to_string(spec.layers), H = std::to_string(spec.hidden);
  const std::string obs = std::to_string(spec.obs_dim), act = std::to_string(spec.action_dim);
  OnnxInterface io;
  io.inputs.push_back({"obs", "float32", {b, obs}, "raw observations (normalized inside)"});
  io.inputs.push_back({"episode_start",
                       "float32",
                       {b},
                       "nonzero where this step is an episode's first: that row's state is "
                       "zeroed before the step"});
  const bool squashed = spec.squash != Squash::kNone;
  io.outputs.push_back(spec.action_kind == ActionKind::kDiscrete
                           ? OnnxTensorInfo{"actions", "int64", {b}, "argmax of the logits"}
                       : squashed
                           ? OnnxTensorInfo{"actions",
                                            "float32",
                                            {b, act},
                                            "the deterministic action in the env's box: low + "
                                            "(tanh(mean) + 1) (high - low) / 2"}
                           : OnnxTensorInfo{"actions",
                                            "float32",
                                            {b, act},
                                            "the Gaussian mean, clamped to the action box when "
                                            "the export knew it"});
  if (spec.action_kind == ActionKind::kDiscrete) {
    io.outputs.push_back({"logits", "float32", {b, act}, "the categorical's logits"});
  } else if (squashed) {
    io.outputs.push_back({"mean", "float32", {b, act}, "the Gaussian mean before tanh"});
    if (spec.squash == Squash::kTanhGaussian)
      io.outputs.push_back({"log_std",
                            "float32",
                            {b, act},
                            fmt::format("the per-row log std (squashed into [{}, {}]) of the "
                                        "Gaussian before tanh",
                                        kLogStdMin, kLogStdMax)});
  } else {
    io.outputs.push_back({"mean", "float32", {b, act}, "the Gaussian mean"});
    io.outputs.push_back({"log_std", "float32", {act}, "the Gaussian log std (state-independent)"});
  }
  io.outputs.push_back({"value", "float32", {b}, "the critic's value"});
  const bool lstm = has_cell_state(spec.cell);
  for (const std::string core : {"", "critic_"}) {
    if (core == "critic_" && spec.shared_core) break;
    const std::string who = core.empty() ? "actor" : "critic";
    io.inputs.push_back({core + "h_in", "float32", {L, b, H}, who + " core's h, per layer"});
    io.outputs.push_back({core + "h_out", "float32", {L, b, H}, "next " + core + "h_in"});
    if (lstm) {
      io.inputs.push_back({core + "c_in", "float32", {L, b, H}, who + " core's c, per layer"});
      io.outputs.push_back({core + "c_out", "float32", {L, b, H}, "next " + core + "c_in"});
    }
  }
  return io;
}

}  // namespace recur::policy::convert
