// A tanh-squashed policy (PolicySpec::squash) end to end on the CPU: its spec validates, round
// trips through metadata and checkpoints (unsquashed metadata unchanged), init_policy and the
// loaders do without actor.log_std, PolicyActor's actions and log-probs equal a float64
// computation from the raw head output, and the ONNX export declares the squashed interface.
//
// The raw head output comes from a "twin": the same network unsquashed, with an actor head as
// wide (2 d for kTanhGaussian), whose deterministic Gaussian action is that output unchanged.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "policy/convert/onnx.h"
#include "policy/distributions.h"
#include "policy/policy_actor.h"
#include "policy/policy_checkpoint.h"
#include "policy/policy_learner.h"
#include "tests/support/alloc_counter.h"
#include "tests/support/skip.h"
#include "tests/support/temp_dir.h"

using namespace recur::policy;
using recur::test::error_of;

namespace {

PolicySpec squashed_spec(Squash squash) {
  PolicySpec s;
  s.obs_dim = 4;
  s.action_kind = ActionKind::kContinuous;
  s.action_dim = 2;
  s.encoder = {6};
  s.head = {5};
  s.hidden = 7;
  s.shared_core = false;
  s.actor_gain = 1.5f;  // sizeable means and log-stds: tanh is exercised off its linear part
  s.squash = squash;
  s.action_low = {-2.0f, 0.1f};
  s.action_high = {2.0f, 0.35f};
  s.exploration_noise = 0.2f;
  return s;
}

// The same network, unsquashed, with the squashed head's width (and a log_std it ignores here).
PolicySpec twin_spec(const PolicySpec& s) {
  PolicySpec t = s;
  t.squash = Squash::kNone;
  t.action_low.clear();
  t.action_high.clear();
  t.action_dim = squash_head_width(s.squash, s.action_dim);
  return t;
}

TensorMap twin_tensors(const PolicySpec& twin, TensorMap tensors) {
  tensors["actor.log_std"] = Tensor({twin.action_dim}, std::vector<float>(twin.action_dim, 0.0f));
  return tensors;
}

// float64 from the definition (policy/squashed_action.h's comment).
double ref_log_std(double raw) {
  return -5.0 + 3.5 * (std::tanh(raw) + 1.0);
}
double ref_env(double a, float low, float high) {
  return low + 0.5 * (a + 1.0) * (high - low);
}

std::vector<std::string> squash_keys() {
  return {"policy.squash", "policy.action_low", "policy.action_high", "policy.exploration_noise"};
}

}  // namespace

TEST_CASE("squashed spec: metadata round trip, and unsquashed metadata carries no new key") {
  for (Squash squash : {Squash::kTanhGaussian, Squash::kTanh}) {
    PolicySpec s = squashed_spec(squash);
    // Bounds that need every digit of float32 to round trip.
    s.action_low = {-1.3333334f, 1e-7f};
    s.action_high = {0.1f, 3.4e38f};
    s.exploration_noise = 0.123456789f;
    const auto m = s.to_metadata();
    CHECK(m.at("policy.squash") == to_string(squash));
    CHECK(m.at("policy.action_low") == "-1.3333334,1e-07");
    CHECK(PolicySpec::from_metadata(m) == s);
    CHECK(squashed_spec(squash).to_metadata().at("policy.action_high") == "2,0.35");
  }
  PolicySpec plain = squashed_spec(Squash::kNone);
  plain.action_low.clear();
  plain.action_high.clear();
  plain.exploration_noise = PolicySpec{}.exploration_noise;  // recorded only when squashed
  const auto m = plain.to_metadata();
  for (const auto& key : squash_keys()) CHECK(m.count(key) == 0);
  const PolicySpec back = PolicySpec::from_metadata(m);  // an older file: no squash keys
  CHECK(back.squash == Squash::kNone);
  CHECK(back.action_low.empty());
  CHECK(back == plain);
}

TEST_CASE("squashed spec: bad metadata is refused naming the key") {
  const auto good = squashed_spec(Squash::kTanhGaussian).to_metadata();
  auto with = [&](const std::string& key, const std::string& value) {
    auto m = good;
    if (value.empty())
      m.erase(key);
    else
      m[key] = value;
    return error_of([&] { PolicySpec::from_metadata(m); });
  };
  CHECK(with("policy.squash", "softsign").find("'policy.squash'") != std::string::npos);
  CHECK(with("policy.action_low", "").find("'policy.action_low'") != std::string::npos);
  CHECK(with("policy.action_high", "1,x").find("'policy.action_high' = 'x'") != std::string::npos);
  CHECK(with("policy.exploration_noise", "big").find("'policy.exploration_noise'") !=
        std::string::npos);
  CHECK(with("policy.action_low", "-1").find("got 1 and 2") != std::string::npos);
  CHECK(with("policy.action_low", "-inf,0").find("finite Box") != std::string::npos);
  // Bounds without a squash: a file no recur wrote; refused rather than silently dropped.
  auto stray = good;
  stray.erase("policy.squash");
  CHECK(error_of([&] { PolicySpec::from_metadata(stray); }).find("squashed actor only") !=
        std::string::npos);
}

TEST_CASE("squashed spec: validate names what is wrong") {
  auto error = [](auto change) {
    PolicySpec s = squashed_spec(Squash::kTanhGaussian);
    change(s);
    return error_of([&] { s.validate(); });
  };
  CHECK(error([](PolicySpec&) {}).empty());
  CHECK(error([](PolicySpec& s) {
          s.action_kind = ActionKind::kDiscrete;
        }).find("squash 'tanh_gaussian' needs continuous actions") != std::string::npos);
  CHECK(error([](PolicySpec& s) {
          s.action_low.clear();
          s.action_high.clear();
        }).find("needs action_low and action_high with action_dim = 2 values each") !=
        std::string::npos);
  CHECK(error([](PolicySpec& s) {
          s.action_high = {1.0f, 2.0f, 3.0f};
        }).find("got 2 and 3") != std::string::npos);
  CHECK(error([](PolicySpec& s) {
          s.action_high[1] = INFINITY;
        }).find("dimension 1 has action_low 0.1 and action_high inf") != std::string::npos);
  CHECK(error([](PolicySpec& s) { s.action_low[0] = 2.0f; }).find("low < high") !=
        std::string::npos);
  CHECK(error([](PolicySpec& s) { s.exploration_noise = -0.1f; }).find("exploration_noise") !=
        std::string::npos);
  CHECK(error([](PolicySpec& s) { s.squash = Squash::kNone; }).find("squashed actor only") !=
        std::string::npos);
}

TEST_CASE("squashed policy: parameters without actor.log_std, a 2d head, checkpoints round trip") {
  const PolicySpec spec = squashed_spec(Squash::kTanhGaussian);
  recur::Rng rng(1);
  const TensorMap params = init_policy(spec, rng);
  CHECK(params.count("actor.log_std") == 0);
  CHECK(params.at("actor.2.weight").shape == std::vector<int64_t>{4, 5});  // 2 d outputs
  CHECK(read_log_std(spec, params).empty());
  PolicyActor actor(spec, 2);
  actor.load(params);  // needs no log_std

  recur::test::TempDir dir("squashed_policy");
  save_policy(dir.path / "p.safetensors", spec, params);
  const PolicyCheckpoint back = load_policy(dir.path / "p.safetensors");
  CHECK(back.spec == spec);
  CHECK(back.tensors == params);

  // An unsquashed continuous policy still needs its log_std.
  const PolicySpec plain = twin_spec(spec);
  PolicyActor unsquashed(plain, 2);
  CHECK(error_of([&] { unsquashed.load(params); }).find("actor.log_std") != std::string::npos);

  // The PPO learner has no squashed head: refused up front, saying what to do.
  CHECK(error_of([&] { PolicyLearner learner(spec); }).find("algo.type sac / td3") !=
        std::string::npos);
}

TEST_CASE("squashed PolicyActor: actions and log-probs equal float64 from the raw head output") {
  for (Squash squash : {Squash::kTanhGaussian, Squash::kTanh}) {
    CAPTURE(to_string(squash));
    const PolicySpec spec = squashed_spec(squash), twin = twin_spec(spec);
    recur::Rng init(2);
    const TensorMap params = init_policy(spec, init);
    const int B = 3, T = 8, d = spec.action_dim, w = twin.action_dim;
    PolicyActor actor(spec, B), raw(twin, B);
    actor.load(params);
    raw.load(twin_tensors(twin, params));
    std::vector<float> obs(static_cast<size_t>(B) * spec.obs_dim), a(B * d), lp(B), v(B),
        head(B * w), raw_lp(B), raw_v(B);
    std::vector<uint8_t> starts(B, 1);
    recur::Rng data(3), rng(4), replay(4), unused(0);
    for (int t = 0; t < T; ++t) {
      CAPTURE(t);
      for (auto& o : obs) o = static_cast<float>(data.uniform(-2, 2));
      const bool deterministic = t % 2 == 1;
      actor.act(obs, starts, rng, deterministic, a, lp, v);
      raw.act(obs, starts, unused, /*deterministic=*/true, head, raw_lp, raw_v);
      CHECK(v == raw_v);  // the critic is untouched by the squash
      for (int b = 0; b < B; ++b) {
        double logp = 0, logp_tol = 0;
        for (int j = 0; j < d; ++j) {
          const double mean = head[static_cast<size_t>(b * w + j)];
          const double eps = deterministic ? 0.0 : replay.normal();  // row-major, as the actor
          double u = 0;
          // Tolerances: float32 carries ~1e-7 relative through log_std, exp and the sum in u,
          // so u is off by du; a = tanh(u) by (1 - a^2) du, the Box map adds ulps of its width,
          // and log(1 - a^2) amplifies a's error by 2|a| / (1 - a^2) as tanh saturates.
          double da = 0x1p-22;
          if (squash == Squash::kTanhGaussian) {
            const double log_std = ref_log_std(head[static_cast<size_t>(b * w + d + j)]);
            const double noise = std::exp(log_std) * eps;
            u = std::tanh(mean + noise);
            logp += -0.5 * eps * eps - log_std - 0.5 * std::log(2 * std::numbers::pi) -
                    std::log(1 - u * u + 1e-6);
            const double du = 1e-6 * (1 + std::abs(mean) + std::abs(noise));
            da += (1 - u * u) * du;
            logp_tol += 2 * std::abs(u) / (1 - u * u + 1e-6) * da +
                        1e-6 * (1 + eps * eps + std::abs(log_std));
          } else {
            u = std::clamp(std::tanh(mean) + spec.exploration_noise * eps, -1.0, 1.0);
          }
          const double x = ref_env(u, spec.action_low[j], spec.action_high[j]);
          const double range = spec.action_high[j] - spec.action_low[j];
          CHECK(std::abs(a[static_cast<size_t>(b * d + j)] - x) <= (0.5 * da + 0x1p-22) * range);
        }
        CHECK(std::abs(lp[static_cast<size_t>(b)] - logp) <= logp_tol);
      }
      if (squash == Squash::kTanh) CHECK(lp == std::vector<float>(B, 0.0f));
      for (int b = 0; b < B; ++b) starts[static_cast<size_t>(b)] = (t + b) % 5 == 0;
    }
  }
}

TEST_CASE("squashed PolicyActor allocates nothing while acting") {
  if (!recur::test::AllocationCounter::available()) {
    recur::test::skip("allocation counting is off in sanitizer builds");
    return;
  }
  for (Squash squash : {Squash::kTanhGaussian, Squash::kTanh}) {
    const PolicySpec spec = squashed_spec(squash);
    recur::Rng rng(5);
    PolicyActor actor(spec, 8);
    actor.load(init_policy(spec, rng));
    std::vector<float> obs(8 * 4, 0.3f), a(8 * 2), lp(8), v(8);
    std::vector<uint8_t> st(8, 0);
    actor.act(obs, st, rng, false, a, lp, v);
    recur::test::AllocationCounter counter;
    for (int t = 0; t < 20; ++t) actor.act(obs, st, rng, t % 2, a, lp, v);
    CHECK(counter.count() == 0);
  }
}

TEST_CASE("onnx export of a squashed policy declares its actions, mean and per-row log_std") {
  if (!convert::onnx_export_available()) return;  // onnx_export_test.cc checks that message
  recur::test::TempDir dir("squashed_onnx");
  for (Squash squash : {Squash::kTanhGaussian, Squash::kTanh}) {
    CAPTURE(to_string(squash));
    PolicySpec spec = squashed_spec(squash);
    spec.activation = Activation::kRelu;  // so that every Tanh node is the squash's
    recur::Rng rng(6);
    const TensorMap params = init_policy(spec, rng);
    const auto path = dir.path / "p.onnx";
    convert::save_policy_onnx(path, spec, params);
    const convert::OnnxModelInfo m = convert::read_onnx(path);
    std::vector<std::string> names;
    for (const auto& o : m.outputs) names.push_back(o.name);
    const bool gaussian = squash == Squash::kTanhGaussian;
    CHECK(names == (gaussian
                        ? std::vector<std::string>{"actions", "mean", "log_std", "value", "h_out",
                                                   "c_out", "critic_h_out", "critic_c_out"}
                        : std::vector<std::string>{"actions", "mean", "value", "h_out", "c_out",
                                                   "critic_h_out", "critic_c_out"}));
    CHECK(m.outputs[0].shape == std::vector<std::string>{"batch", "2"});
    if (gaussian) CHECK(m.outputs[2].shape == std::vector<std::string>{"batch", "2"});
    CHECK(m.metadata.at("policy.squash") == to_string(squash));
    CHECK(m.metadata.at("action_low") == "-2,0.1");
    CHECK(m.metadata.at("action_high") == "2,0.35");
    CHECK(m.metadata.at("actions").find("tanh(mean)") != std::string::npos);
    CHECK(std::count(m.op_types.begin(), m.op_types.end(), "Tanh") == (gaussian ? 2 : 1));
    CHECK(std::count(m.op_types.begin(), m.op_types.end(), "Split") == (gaussian ? 1 : 0));

    // The env's box, when the caller knows it, must be the policy's own.
    convert::OnnxExportOptions same, other;
    same.action_low = spec.action_low;
    same.action_high = spec.action_high;
    CHECK(convert::policy_to_onnx(spec, params, same) == convert::policy_to_onnx(spec, params));
    other.action_low = {-1.0f, 0.1f};
    other.action_high = spec.action_high;
    CHECK(error_of([&] {
            convert::policy_to_onnx(spec, params, other);
          }).find("not the squashed policy's own") != std::string::npos);
  }
}
