// policy/convert/onnx.h without Python: every policy kind exports, the file parses with libonnx
// and passes its checker and strict shape inference, and declares the inputs, outputs and
// metadata the header documents. (ONNX Runtime's numbers against recur's are checked by
// tools/python/tests/test_onnx_export.py.) In a build without libonnx the export must say how to
// get it instead.
#include "policy/convert/onnx.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "policy/policy_actor.h"
#include "policy/policy_checkpoint.h"
#include "tests/support/temp_dir.h"

using namespace recur::policy;
using namespace recur::policy::convert;
using recur::test::error_of;
using recur::test::TempDir;

namespace {

struct Kind {
  const char* name;
  PolicySpec spec;
};

std::vector<Kind> kinds() {
  auto make = [](CellType cell, ActionKind action, int layers, float clip, bool shared,
                 std::vector<int> encoder) {
    PolicySpec s;
    s.obs_dim = 5;
    s.action_kind = action;
    s.action_dim = action == ActionKind::kDiscrete ? 3 : 2;
    s.encoder = std::move(encoder);
    s.head = {};
    s.cell = cell;
    s.hidden = 6;
    s.layers = layers;
    s.cell_clip = clip;
    s.shared_core = shared;
    return s;
  };
  const auto D = ActionKind::kDiscrete, C = ActionKind::kContinuous;
  return {{"lstm discrete shared", make(CellType::kLstm, D, 1, 0, true, {8})},
          {"lstm clip 2 layers separate", make(CellType::kLstm, D, 2, 0.5f, false, {})},
          {"gru continuous separate", make(CellType::kGru, C, 2, 0, false, {8, 8})},
          {"rnn_tanh continuous", make(CellType::kRnnTanh, C, 1, 0, true, {})},
          {"rnn_relu discrete 3 layers", make(CellType::kRnnRelu, D, 3, 0, false, {4})},
          {"mingru discrete 2 layers separate", make(CellType::kMinGru, D, 2, 0, false, {8})},
          {"mingru continuous shared", make(CellType::kMinGru, C, 1, 0, true, {})},
          {"mingru_highway discrete 3 layers separate",
           make(CellType::kMinGruHighway, D, 3, 0, false, {8})},
          {"mingru_highway continuous shared", make(CellType::kMinGruHighway, C, 1, 0, true, {})},
          {"lstm_ln discrete 2 layers separate", make(CellType::kLstmLn, D, 2, 0, false, {8})},
          {"lstm_ln continuous shared", make(CellType::kLstmLn, C, 1, 0, true, {})}};
}

TensorMap random_policy(const PolicySpec& spec, uint64_t seed) {
  recur::Rng rng(seed);
  return init_policy(spec, rng);
}

bool has_op(const OnnxModelInfo& m, const std::string& op) {
  return std::find(m.op_types.begin(), m.op_types.end(), op) != m.op_types.end();
}

}  // namespace

TEST_CASE("onnx export: each policy kind parses with libonnx and declares its interface") {
  if (!onnx_export_available()) {
    const std::string e =
        error_of([] { policy_to_onnx(kinds()[0].spec, random_policy(kinds()[0].spec, 1)); });
    CHECK(e.find("no ONNX export") != std::string::npos);
    CHECK(e.find("libonnx-dev") != std::string::npos);
    return;
  }
  TempDir dir("onnx_export");
  for (const Kind& k : kinds()) {
    CAPTURE(k.name);
    const PolicySpec& spec = k.spec;
    OnnxExportOptions options;
    options.metadata["env.id"] = "Test-v0";
    if (spec.action_kind == ActionKind::kContinuous) {
      options.action_low = {-1.0f, -std::numeric_limits<float>::infinity()};
      options.action_high = {1.0f, 2.0f};
    }
    const auto path = dir.path / "policy.onnx";
    save_policy_onnx(path, spec, random_policy(spec, 7), options);
    const OnnxModelInfo m = read_onnx(path);
    CHECK(m.ir_version == kOnnxIrVersion);
    CHECK(m.opset == kOnnxOpset);
    CHECK(m.producer == "recur");

    // Declared inputs and outputs: exactly onnx_interface's, with the batch axis symbolic.
    const OnnxInterface io = onnx_interface(spec);
    auto without_doc = [](std::vector<OnnxTensorInfo> v) {
      for (auto& t : v) t.doc.clear();
      return v;
    };
    CHECK(m.inputs == without_doc(io.inputs));
    CHECK(m.outputs == without_doc(io.outputs));
    const size_t states = (has_cell_state(spec.cell) ? 2 : 1) * (spec.shared_core ? 1 : 2);
    CHECK(m.inputs.size() == 2 + states);
    CHECK(m.inputs[0].shape == std::vector<std::string>{"batch", "5"});
    CHECK(m.inputs[2].name == "h_in");
    CHECK(m.inputs[2].shape == std::vector<std::string>{std::to_string(spec.layers), "batch", "6"});
    CHECK(m.outputs[0].name == "actions");
    CHECK(m.outputs[0].type == (spec.action_kind == ActionKind::kDiscrete ? "int64" : "float32"));

    // Metadata a user discovers the model by.
    CHECK(m.metadata.at("recur.format") == kOnnxFormat);
    CHECK(m.metadata.at("env.id") == "Test-v0");
    CHECK(m.metadata.at("core.cell") == to_string(spec.cell));
    CHECK(m.metadata.at("core.layers") == std::to_string(spec.layers));
    CHECK(m.metadata.at("inputs").find("obs: float32 [batch, 5]") != std::string::npos);
    CHECK(m.metadata.at("outputs").find("value: float32 [batch]") != std::string::npos);
    CHECK(m.doc_string.find("h_out") != std::string::npos);
    if (spec.action_kind == ActionKind::kContinuous) {
      CHECK(m.metadata.at("action_low") == "-1,-inf");
      CHECK(m.metadata.at("action_high") == "1,2");
    } else {
      CHECK(m.metadata.count("action_low") == 0);
    }

    // Op choice: the fused op unless the LSTM clips its cell or the cell is minGRU or the
    // layer-norm LSTM (no ONNX op): core.ops says which.
    const bool unrolled = (spec.cell == CellType::kLstm && spec.cell_clip > 0) ||
                          is_mingru(spec.cell) || spec.cell == CellType::kLstmLn;
    const char* fused = spec.cell == CellType::kLstm  ? "LSTM"
                        : spec.cell == CellType::kGru ? "GRU"
                                                      : "RNN";
    CHECK(has_op(m, fused) == !unrolled);
    CHECK(has_op(m, "Clip"));  // the normalizer's, and the cell's when unrolled
    CHECK(static_cast<int>(std::count(m.op_types.begin(), m.op_types.end(), "Split")) ==
          (unrolled ? spec.layers * (spec.shared_core ? 1 : 2) : 0));
    CHECK(has_op(m, "ArgMax") == (spec.action_kind == ActionKind::kDiscrete));
    CHECK(has_op(m, "ReduceMean") == (spec.cell == CellType::kLstmLn));  // its layer norms
  }
}

TEST_CASE("onnx export: a policy recur cannot export is refused with the part named") {
  if (!onnx_export_available()) return;  // the case above checks the message of such builds
  const PolicySpec spec = kinds()[0].spec;

  TensorMap nan = random_policy(spec, 3);
  nan.at("core.weight_hh_l0").data[4] = std::nanf("");
  CHECK(error_of([&] {
          policy_to_onnx(spec, nan);
        }).find("tensor 'core.weight_hh_l0' holds nan at index 4") != std::string::npos);

  TensorMap missing = random_policy(spec, 3);
  missing.erase("critic.weight");
  CHECK(error_of([&] { policy_to_onnx(spec, missing); }).find("critic.weight") !=
        std::string::npos);

  TensorMap no_stats = random_policy(spec, 3);
  no_stats.erase("obs_norm.var");
  CHECK(error_of([&] { policy_to_onnx(spec, no_stats); }).find("obs_norm.var") !=
        std::string::npos);

  PolicySpec cont = kinds()[2].spec;
  OnnxExportOptions box;
  box.action_low = {-1.0f};
  box.action_high = {1.0f};
  CHECK(error_of([&] {
          policy_to_onnx(cont, random_policy(cont, 3), box);
        }).find("the action box has 1 low and 1 high bounds; the policy's actions have 2") !=
        std::string::npos);
}

TEST_CASE("onnx export: a failed write leaves nothing half-written") {
  if (!onnx_export_available()) return;
  const PolicySpec spec = kinds()[0].spec;
  const TensorMap tensors = random_policy(spec, 5);
  TempDir dir("onnx_export_write");

  // No such directory: an error naming the file, nothing created.
  const auto nowhere = dir.path / "missing" / "policy.onnx";
  CHECK(error_of([&] {
          save_policy_onnx(nowhere, spec, tensors);
        }).find("cannot write the ONNX model " + nowhere.string()) != std::string::npos);
  CHECK(std::filesystem::is_empty(dir.path));

  // The target is a directory: the rename fails, the directory and its content stay, and no
  // temporary file is left beside it.
  const auto blocked = dir.path / "policy.onnx";
  std::filesystem::create_directory(blocked);
  recur::test::write_all(blocked / "keep", "old");
  CHECK(!error_of([&] { save_policy_onnx(blocked, spec, tensors); }).empty());
  CHECK(recur::test::read_all(blocked / "keep") == "old");
  CHECK(std::distance(std::filesystem::directory_iterator(dir.path),
                      std::filesystem::directory_iterator()) == 1);

  // A good write replaces an existing file whole.
  const auto file = dir.path / "ok.onnx";
  recur::test::write_all(file, "not a model");
  save_policy_onnx(file, spec, tensors);
  CHECK(recur::test::read_all(file) == policy_to_onnx(spec, tensors));
}

TEST_CASE("obs_clip: a checkpoint's bound drives the actor (eval) and the ONNX export alike") {
  PolicySpec spec = kinds()[2].spec;  // continuous: the mean shows small changes of the input
  spec.obs_clip = 0.5f;
  const TensorMap params = random_policy(spec, 11);
  // Recorded only when it is not the default; files without it mean 10.
  CHECK(spec.to_metadata().at("policy.obs_clip") == "0.5");
  PolicySpec plain = spec;
  plain.obs_clip = PolicySpec::kDefaultObsClip;
  CHECK(plain.to_metadata().count("policy.obs_clip") == 0);
  CHECK(PolicySpec::from_metadata(plain.to_metadata()).obs_clip == 10.0f);
  auto zero = spec.to_metadata();
  zero["policy.obs_clip"] = "0";
  CHECK_THROWS_AS(PolicySpec::from_metadata(zero), recur::Error);

  // Through a checkpoint file, as `recur eval` loads it.
  TempDir dir("obs_clip");
  save_policy(dir.path / "ckpt.safetensors", spec, params);
  const PolicyCheckpoint loaded = load_policy(dir.path / "ckpt.safetensors");
  REQUIRE(loaded.spec.obs_clip == 0.5f);

  // Observations far from the prior mean 0 / var 1: clipped at 0.5 instead of 10.
  const std::vector<float> obs = {3.0f, -2.0f, 0.25f, 5.0f, -7.0f};
  const std::vector<uint8_t> start = {1};
  auto act = [&](const PolicySpec& s, std::vector<float>& nobs) {
    PolicyActor actor(s, 1);
    actor.load(params);
    std::vector<float> a(2), lp(1), v(1);
    recur::Rng rng(0);
    actor.act(obs, start, rng, /*deterministic=*/true, a, lp, v);
    nobs.assign(actor.normalized_obs().begin(), actor.normalized_obs().end());
    return a;
  };
  std::vector<float> nobs_clipped, nobs_plain;
  const auto a_clipped = act(loaded.spec, nobs_clipped);
  const auto a_plain = act(plain, nobs_plain);
  CHECK(nobs_clipped == std::vector<float>{0.5f, -0.5f, 0.25f, 0.5f, -0.5f});
  CHECK(nobs_plain[4] == doctest::Approx(-7.0f).epsilon(1e-6));
  CHECK(a_clipped != a_plain);

  if (!onnx_export_available()) return;
  // The export clips with the checkpoint's bound (ObsNormalizer's, whose value it reports) and
  // carries it in the spec's metadata, so a re-import or a reader sees the same bound.
  save_policy_onnx(dir.path / "clipped.onnx", loaded.spec, loaded.tensors, {});
  const OnnxModelInfo m = read_onnx(dir.path / "clipped.onnx");
  CHECK(m.metadata.at("obs_norm.clip") == "0.5");
  CHECK(m.metadata.at("policy.obs_clip") == "0.5");
  save_policy_onnx(dir.path / "plain.onnx", plain, params, {});
  const OnnxModelInfo p = read_onnx(dir.path / "plain.onnx");
  CHECK(p.metadata.at("obs_norm.clip") == "10");
  CHECK(p.metadata.count("policy.obs_clip") == 0);
}
