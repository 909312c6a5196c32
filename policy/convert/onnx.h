// A trained policy's whole actor as one ONNX model: what `recur eval --deterministic` computes
// for one step of B envs, runnable by ONNX Runtime (or any ONNX runtime) without recur.
//
//   obs [batch, obs_dim] -> clip((obs - mean) / std, -c, c)      normalizer statistics baked in
//     -> encoder MLP -> core (layers) -> actor head, critic head  (critic: own encoder + core
//                                                                  when shared_core is false)
//   inputs   obs            float32 [batch, obs_dim]   raw observations
//            episode_start  float32 [batch]            nonzero: zero this row's state first
//            h_in           float32 [layers, batch, H] actor core's h (c_in too for LSTM)
//            critic_h_in    float32 [layers, batch, H] separate critic core only (and critic_c_in)
//   outputs  actions  int64 [batch] (argmax of the logits) | float32 [batch, d] (the Gaussian
//                     mean clamped to the action box when the box is known)
//            logits   float32 [batch, n]                  discrete
//            mean     float32 [batch, d], log_std [d]     continuous
//   squashed (spec.squash, policy/squashed_action.h): actions = low + (tanh(mean) + 1)(high - low)
//            / 2 in the spec's own box (TanhGaussian::mode); mean before tanh; log_std float32
//            [batch, d] per row (kTanhGaussian only: squash_log_std of the head's raw half)
//            value    float32 [batch]
//            h_out, c_out, critic_h_out, critic_c_out: the next state of every *_in
//
// The state layout is cuDNN's and PyTorch's nn.LSTM (layers, batch, hidden); zeros start an
// episode, and each *_out is fed back as the matching *_in. The model's doc_string and
// metadata_props carry these names and shapes, the spec and the action box.
//
// Opset 13 (IR version 7, ONNX 1.8 of 2020): the lowest opset in which every op used here has
// its current form (Split, Squeeze and Unsqueeze take sizes and axes as inputs, Clip takes
// min/max as inputs; LSTM/GRU/RNN are version 7, identical to 14 but for the batch-first layout
// that ONNX Runtime's CPU kernels reject anyway), so runtimes released since late 2020 (ONNX
// Runtime 1.6 and later) load the file; no op needs anything newer. libonnx 1.12 checks up to
// opset 17 and IR 8.
//
// Cores: LSTM without cell clip, GRU and RNN use ONNX's fused LSTM / GRU (linear_before_reset=1,
// cuDNN's "reset after" form) / RNN (Tanh or Relu), one node per layer, weights permuted into
// ONNX's gate order: runtimes have fast kernels for them. An LSTM with cell clip is one unrolled
// step of primitive ops, because ONNX's `clip` attribute clamps gate pre-activations while recur
// (cuDNN's MINMAX, core_spec.h) clamps the cell state where it is read and returns it raw.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "policy/policy_spec.h"
#include "policy/tensor.h"

namespace recur::policy::convert {

inline constexpr int kOnnxOpset = 13;
inline constexpr int kOnnxIrVersion = 7;
inline constexpr const char* kOnnxFormat = "recur.onnx-policy/1";

struct OnnxExportOptions {
  // Continuous actions: the env's action box (action_dim values each). `actions` is the mean
  // clamped into it, as the env would clamp it; empty: the box is unknown, `actions` = `mean`.
  // A squashed policy has its own box (spec.action_low/high): empty, or the same.
  std::vector<float> action_low, action_high;
  // Extra metadata_props (the CLI passes the checkpoint's: "run.env_id", ...); the export's own
  // keys take precedence.
  std::map<std::string, std::string> metadata;
};

// One declared graph input or output; a dimension is a number or "batch".
struct OnnxTensorInfo {
  std::string name;
  std::string type;  // "float32" or "int64"
  std::vector<std::string> shape;
  std::string doc;
  bool operator==(const OnnxTensorInfo&) const = default;
};

struct OnnxInterface {
  std::vector<OnnxTensorInfo> inputs, outputs;
};

// The inputs and outputs the export declares for spec, in graph order.
OnnxInterface onnx_interface(const PolicySpec& spec);

// False in a build of recur without libonnx (RECUR_ONNX=OFF, or AUTO that did not find it):
// then the functions below throw recur::Error saying how to get it.
bool onnx_export_available();
// Throws that recur::Error when !onnx_export_available(): callers check before any other work.
void require_onnx_export();

// The serialized ModelProto, checked by onnx::checker. Throws recur::Error naming a tensor the
// export cannot use (missing, misshapen, non-finite) or a bad action box.
std::string policy_to_onnx(const PolicySpec& spec, const TensorMap& tensors,
                           const OnnxExportOptions& options = {});

// policy_to_onnx written atomically (core/atomic_file.h): an existing file is replaced whole or
// left as it was, never half-written.
void save_policy_onnx(const std::filesystem::path& path, const PolicySpec& spec,
                      const TensorMap& tensors, const OnnxExportOptions& options = {});

// What a model file declares, read back with libonnx after onnx::checker and strict shape
// inference passed on it (recur::Error otherwise, naming the file).
struct OnnxModelInfo {
  int64_t ir_version = 0;
  int64_t opset = 0;  // of the default domain
  std::string producer, doc_string;
  std::vector<OnnxTensorInfo> inputs, outputs;  // doc left empty
  std::map<std::string, std::string> metadata;
  std::vector<std::string> op_types;  // of every node, in graph order
};
OnnxModelInfo read_onnx(const std::filesystem::path& path);

}  // namespace recur::policy::convert
