// `recur convert`: moves a recurrent core between recur checkpoints (canonical PyTorch names)
// and other frameworks' layouts (policy/convert/), and shows what a checkpoint holds.
//
//   recur convert show CKPT
//   recur convert export CKPT --to tf-lstm-block|tf-layer-norm-lstm|keras --out FILE
//                        [--forget-bias F] [--prefix P]
//   recur convert export CKPT|RUN_DIR --to onnx --out policy.onnx [--plugin PATH]
//   recur convert import FILE --from tf-lstm-block|tf-layer-norm-lstm|keras --out CKPT
//                        [--forget-bias F]
//
// Foreign files are safetensors too, with the framework's variable names (see --names); the
// export records the layout and forget_bias in the file's metadata, and the import reads
// forget_bias back from there unless --forget-bias is given. `--to onnx` is another kind of
// export: the whole actor of a policy checkpoint (normalizer, encoder, cores, heads, action) as
// one ONNX model that ONNX Runtime runs without recur (policy/convert/onnx.h).
// tf-layer-norm-lstm is TF's LayerNormBasicLSTMCell (layer_norm=True), which holds lstm_ln cores
// (policy/convert/tf_layer_norm_lstm.h); tf-lstm-block holds lstm cores.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "agent/env_plugins.h"
#include "agent/policy_target.h"
#include "core/error.h"
#include "policy/canonical_weights.h"
#include "policy/checkpoint.h"
#include "policy/convert/core_metadata.h"
#include "policy/convert/keras.h"
#include "policy/convert/onnx.h"
#include "policy/convert/tf_layer_norm_lstm.h"
#include "policy/convert/tf_lstm_block.h"
#include "tools/cli/commands.h"

namespace recur::cli {

namespace {

using policy::Checkpoint;
using policy::CoreSpec;
using policy::TensorMap;

constexpr const char* kLayouts = "tf-lstm-block, tf-layer-norm-lstm, keras, onnx";
constexpr const char* kLayoutKey = "recur.layout";
constexpr const char* kForgetBiasKey = "recur.forget_bias";
constexpr const char* kCellClipKey = "recur.cell_clip";
// TF's contrib layer_norm eps: what every LayerNormBasicLSTMCell normalizes with.
constexpr float kTfLayerNormEpsilon = 1e-12f;

enum class Layout { kTfLstmBlock, kTfLayerNormLstm, kKeras, kOnnx };

Layout parse_layout(const std::string& name) {
  if (name == "tf-lstm-block") return Layout::kTfLstmBlock;
  if (name == "tf-layer-norm-lstm") return Layout::kTfLayerNormLstm;
  if (name == "keras") return Layout::kKeras;
  if (name == "onnx") return Layout::kOnnx;
  throw Error(fmt::format("layout '{}' is unknown; known layouts: {}", name, kLayouts));
}

// The foreign layout's options; an empty `names` keeps the layout's default template.
struct LayoutArgs {
  std::string layout;
  std::string names;
  float forget_bias = 1.0f;
  CLI::Option* forget_bias_option = nullptr;
};

void add_layout_options(CLI::App* cmd, LayoutArgs& args) {
  args.forget_bias_option =
      cmd->add_option("--forget-bias", args.forget_bias,
                      "tf-lstm-block, tf-layer-norm-lstm: the cell's forget_bias, added to f "
                      "at run time (import: default from the file's metadata, else 1.0)")
          ->capture_default_str();
  cmd->add_option("--names", args.names,
                  "Variable-name template of layer k: tf-lstm-block "
                  "'rnn/multi_rnn_cell/cell_{k}/lstm_cell/', tf-layer-norm-lstm "
                  "'rnn/multi_rnn_cell/cell_{k}/layer_norm_basic_lstm_cell/', keras "
                  "'{layer}/{cell}/'");
}

policy::convert::TfLstmBlockOptions tf_options(const LayoutArgs& args, float forget_bias) {
  policy::convert::TfLstmBlockOptions o;
  o.forget_bias = forget_bias;
  if (!args.names.empty()) o.names = args.names;
  return o;
}

policy::convert::TfLayerNormLstmOptions tf_ln_options(const LayoutArgs& args, float forget_bias) {
  policy::convert::TfLayerNormLstmOptions o;
  o.forget_bias = forget_bias;
  if (!args.names.empty()) o.names = args.names;
  return o;
}

policy::convert::KerasOptions keras_options(const LayoutArgs& args) {
  policy::convert::KerasOptions o;
  if (!args.names.empty()) o.names = args.names;
  return o;
}

float parse_float(const std::string& key, const std::string& text) {
  try {
    size_t used = 0;
    const float v = std::stof(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  throw Error(fmt::format("metadata '{}' is '{}', not a number", key, text));
}

void show(const std::string& path) {
  const Checkpoint ckpt = policy::load_checkpoint(path);
  fmt::print("{}\n  metadata ({} keys)\n", path, ckpt.metadata.size());
  for (const auto& [key, value] : ckpt.metadata) fmt::print("    {} = {}\n", key, value);
  size_t total = 0, width = 0;
  for (const auto& [name, t] : ckpt.tensors) {
    total += t.data.size();
    width = std::max(width, name.size());
  }
  fmt::print("  tensors ({}, {} values)\n", ckpt.tensors.size(), total);
  for (const auto& [name, t] : ckpt.tensors) {
    const std::string shape = fmt::format("[{}]", fmt::join(t.shape, ", "));
    if (t.data.empty()) {
      fmt::print("    {:<{}} {:<12} empty\n", name, width, shape);
      continue;
    }
    const auto [lo, hi] = std::minmax_element(t.data.begin(), t.data.end());
    double sum = 0;
    for (float v : t.data) sum += v;
    fmt::print("    {:<{}} {:<12} min {:<12.6g} max {:<12.6g} mean {:.6g}\n", name, width, shape,
               *lo, *hi, sum / static_cast<double>(t.data.size()));
  }
}

// The whole policy of a checkpoint or run directory (as `recur eval` loads it) as ONNX; a
// continuous policy's mean is clamped to the action box of its recorded env when the registry
// knows that env. A plugin env's run loads its plugins as `recur eval` does: `plugins` when
// given, else the ones the checkpoint recorded (an error names a recorded file that is missing
// or changed), so the box comes from the env.
void export_onnx(const std::string& in, const std::string& out, const LayoutArgs& args,
                 const std::vector<std::string>& plugins) {
  policy::convert::require_onnx_export();
  if (args.forget_bias_option->count() || !args.names.empty())
    spdlog::warn("--forget-bias and --names are ignored for onnx (it exports the whole policy)");
  const agent::PolicyTarget target = agent::load_policy_target(in, "", /*foreign_env_ok=*/true);
  if (!plugins.empty()) {
    load_cli_plugins(plugins);
  } else if (const auto it = target.checkpoint.metadata.find(agent::kMetaEnvPlugins);
             it != target.checkpoint.metadata.end()) {
    agent::load_recorded_plugins(it->second, target.path.string());
  }
  const policy::PolicySpec& spec = target.checkpoint.spec;
  const policy::convert::OnnxExportOptions options = agent::onnx_export_options(target);
  if (spec.action_kind == policy::ActionKind::kContinuous && spec.squash == policy::Squash::kNone &&
      options.action_low.empty())
    spdlog::warn(
        "the action box of env '{}' is unknown here (not in the registry): the model's "
        "actions are the unclamped mean; clamp them as the env does",
        target.env_id);
  policy::convert::save_policy_onnx(out, spec, target.checkpoint.tensors, options);
  std::vector<std::string> inputs, outputs;
  const auto io = policy::convert::onnx_interface(spec);
  for (const auto& t : io.inputs)
    inputs.push_back(fmt::format("{} [{}]", t.name, fmt::join(t.shape, ", ")));
  for (const auto& t : io.outputs)
    outputs.push_back(fmt::format("{} [{}]", t.name, fmt::join(t.shape, ", ")));
  fmt::print("exported the {} policy ({} {} x{}) of {} to {} (ONNX opset {})\n",
             spec.action_kind == policy::ActionKind::kDiscrete ? "discrete" : "continuous",
             policy::to_string(spec.cell), spec.hidden, spec.layers, target.path.string(), out,
             policy::convert::kOnnxOpset);
  fmt::print("  inputs  {}\n  outputs {}\n", fmt::join(inputs, ", "), fmt::join(outputs, ", "));
}

void export_core(const std::string& in, const std::string& out, const std::string& prefix,
                 const LayoutArgs& args, const std::vector<std::string>& plugins) {
  const Layout layout = parse_layout(args.layout);
  if (layout == Layout::kOnnx) return export_onnx(in, out, args, plugins);
  if (!plugins.empty())
    spdlog::warn("--plugin is ignored for {} (it exports the core alone)", args.layout);
  const Checkpoint ckpt = policy::load_checkpoint(in);
  const CoreSpec spec = policy::convert::read_core_spec(ckpt, prefix);
  const auto weights = policy::CanonicalWeights::from_tensors(spec, ckpt.tensors, prefix);
  Checkpoint foreign;
  foreign.metadata[kLayoutKey] = args.layout;
  if (layout == Layout::kTfLstmBlock) {
    foreign.tensors =
        policy::convert::to_tf_lstm_block(weights, tf_options(args, args.forget_bias));
    foreign.metadata[kForgetBiasKey] = fmt::format("{}", args.forget_bias);
  } else if (layout == Layout::kTfLayerNormLstm) {
    foreign.tensors =
        policy::convert::to_tf_layer_norm_lstm(weights, tf_ln_options(args, args.forget_bias));
    foreign.metadata[kForgetBiasKey] = fmt::format("{}", args.forget_bias);
    // The file cannot carry eps: TF's layer_norm always uses 1e-12, and so does its import.
    if (spec.norm_epsilon != kTfLayerNormEpsilon)
      spdlog::warn(
          "the core's LayerNorm eps is {}, TF's LayerNormBasicLSTMCell uses {}: the TF cell's "
          "outputs differ slightly where a normalized block's variance is near {} (an import "
          "of {} runs with {})",
          spec.norm_epsilon, kTfLayerNormEpsilon, spec.norm_epsilon, out, kTfLayerNormEpsilon);
  } else {
    if (args.forget_bias_option->count())
      spdlog::warn("--forget-bias is ignored for keras (its unit_forget_bias is an initializer)");
    foreign.tensors = policy::convert::to_keras(weights, keras_options(args));
  }
  if (spec.cell_clip > 0) {
    foreign.metadata[kCellClipKey] = fmt::format("{}", spec.cell_clip);
    spdlog::warn("the core clips its cell state at {}: set the same cell_clip in the target cell{}",
                 spec.cell_clip, layout == Layout::kKeras ? " (Keras' LSTM has none)" : "");
  }
  policy::save_checkpoint(out, foreign);
  fmt::print("exported {} core (input {}, hidden {}, layers {}) from {} to {} as {}\n",
             policy::to_string(spec.cell), spec.input, spec.hidden, spec.layers, in, out,
             args.layout);
}

void import_core(const std::string& in, const std::string& out, const LayoutArgs& args) {
  const Layout layout = parse_layout(args.layout);
  RECUR_CHECK(layout != Layout::kOnnx,
              "--from onnx: recur exports ONNX models but does not import them; import from "
              "tf-lstm-block, tf-layer-norm-lstm or keras");
  const Checkpoint foreign = policy::load_checkpoint(in);
  const auto meta = [&](const char* key) {
    const auto it = foreign.metadata.find(key);
    return it == foreign.metadata.end() ? std::string() : it->second;
  };
  // The TF cells' forget_bias: --forget-bias, else the one recorded by our export, else 1.0.
  const auto forget_bias = [&] {
    float fb = args.forget_bias;
    if (!meta(kForgetBiasKey).empty()) {
      const float recorded = parse_float(kForgetBiasKey, meta(kForgetBiasKey));
      if (args.forget_bias_option->count() == 0)
        fb = recorded;
      else if (recorded != fb)
        spdlog::warn("--forget-bias {} overrides the {} recorded in {}", fb, recorded, in);
    }
    return fb;
  };
  policy::CanonicalWeights weights;
  TensorMap used;  // the tensors the conversion read, to report the others
  if (layout == Layout::kTfLstmBlock) {
    const auto options = tf_options(args, forget_bias());
    const CoreSpec spec = policy::convert::infer_tf_lstm_block_spec(foreign.tensors, options);
    weights = policy::convert::from_tf_lstm_block(foreign.tensors, spec, options);
    used = policy::convert::to_tf_lstm_block(weights, options);
    fmt::print("forget_bias {} folded into the forget-gate biases\n", options.forget_bias);
  } else if (layout == Layout::kTfLayerNormLstm) {
    const auto options = tf_ln_options(args, forget_bias());
    // The inferred spec carries TF's eps (1e-12), which write_core_metadata records below.
    const CoreSpec spec = policy::convert::infer_tf_layer_norm_lstm_spec(foreign.tensors, options);
    weights = policy::convert::from_tf_layer_norm_lstm(foreign.tensors, spec, options);
    used = policy::convert::to_tf_layer_norm_lstm(weights, options);
    fmt::print("forget_bias {} folded into the forget-gate LayerNorm shifts; LayerNorm eps {}\n",
               options.forget_bias, spec.norm_epsilon);
  } else {
    if (args.forget_bias_option->count())
      spdlog::warn("--forget-bias is ignored for keras (its unit_forget_bias is an initializer)");
    const auto options = keras_options(args);
    const CoreSpec spec = policy::convert::infer_keras_spec(foreign.tensors, options);
    weights = policy::convert::from_keras(foreign.tensors, spec, options);
    used = policy::convert::to_keras(weights, options);
  }
  if (!meta(kCellClipKey).empty())
    weights.spec.cell_clip = parse_float(kCellClipKey, meta(kCellClipKey));
  std::vector<std::string> ignored;
  for (const auto& [name, t] : foreign.tensors)
    if (!used.count(name)) ignored.push_back(name);
  if (!ignored.empty())
    spdlog::warn("{} tensors are not part of the core and were not converted: {}", ignored.size(),
                 fmt::join(ignored, ", "));

  Checkpoint ckpt;
  ckpt.tensors = weights.to_tensors("core.");
  policy::convert::write_core_metadata(weights.spec, ckpt, "core.");
  policy::save_checkpoint(out, ckpt);
  const CoreSpec& spec = weights.spec;
  fmt::print("imported {} core (input {}, hidden {}, layers {}) from {} ({}) to {}\n",
             policy::to_string(spec.cell), spec.input, spec.hidden, spec.layers, in, args.layout,
             out);
}

}  // namespace

void add_convert_command(CLI::App& app, int& exit_code) {
  auto* convert = app.add_subcommand(
      "convert",
      "Convert a recurrent core between recur checkpoints and TF/Keras layouts; export a policy "
      "as ONNX");
  convert->require_subcommand(1);

  auto* show_cmd = convert->add_subcommand("show", "Print a checkpoint's metadata and tensors");
  auto show_path = std::make_shared<std::string>();
  show_cmd->add_option("checkpoint", *show_path, "A safetensors file")->required();
  show_cmd->callback([show_path, &exit_code] {
    show(*show_path);
    exit_code = 0;
  });

  struct ExportArgs {
    std::string in, out, prefix = "core.";
    LayoutArgs layout;
    std::vector<std::string> plugins;
  };
  auto ex = std::make_shared<ExportArgs>();
  auto* export_cmd =
      convert->add_subcommand("export",
                              "Write a checkpoint's core in another framework's layout, or its "
                              "whole policy as ONNX (--to onnx)");
  export_cmd->add_option("checkpoint", ex->in, "A recur checkpoint (onnx: or a run directory)")
      ->required();
  export_cmd->add_option("--to", ex->layout.layout, fmt::format("Target layout: {}", kLayouts))
      ->required();
  export_cmd->add_option("--out", ex->out, "Output safetensors file (onnx: the .onnx model)")
      ->required();
  export_cmd->add_option("--prefix", ex->prefix, "Name prefix of the core's canonical tensors")
      ->capture_default_str();
  add_layout_options(export_cmd, ex->layout);
  add_plugin_option(export_cmd, ex->plugins);
  export_cmd->callback([ex, &exit_code] {
    export_core(ex->in, ex->out, ex->prefix, ex->layout, ex->plugins);
    exit_code = 0;
  });

  struct ImportArgs {
    std::string in, out;
    LayoutArgs layout;
  };
  auto im = std::make_shared<ImportArgs>();
  auto* import_cmd = convert->add_subcommand(
      "import", "Write a recur checkpoint (core.* tensors) from another framework's layout");
  import_cmd->add_option("file", im->in, "A safetensors file in the source layout")->required();
  import_cmd->add_option("--from", im->layout.layout, fmt::format("Source layout: {}", kLayouts))
      ->required();
  import_cmd->add_option("--out", im->out, "Output recur checkpoint")->required();
  add_layout_options(import_cmd, im->layout);
  import_cmd->callback([im, &exit_code] {
    import_core(im->in, im->out, im->layout);
    exit_code = 0;
  });
}

}  // namespace recur::cli
