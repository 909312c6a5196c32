#include "policy/policy_spec.h"

#include <charconv>
#include <cmath>

#include <fmt/ranges.h>

#include "core/error.h"
#include "policy/canonical_weights.h"
#include "policy/obs_normalizer.h"

namespace recur::policy {

MlpSpec PolicySpec::encoder_spec() const {
  MlpSpec s;
  s.widths = {obs_dim};
  s.widths.insert(s.widths.end(), encoder.begin(), encoder.end());
  s.activation = activation;
  s.activate_output = true;
  return s;
}

MlpSpec PolicySpec::actor_head_spec() const {
  MlpSpec s;
  s.widths = {hidden};
  s.widths.insert(s.widths.end(), head.begin(), head.end());
  s.widths.push_back(action_dim);
  s.activation = activation;
  s.activate_output = false;
  s.output_gain = actor_gain;
  return s;
}

MlpSpec PolicySpec::critic_head_spec() const {
  MlpSpec s;
  s.widths = {hidden};
  s.widths.insert(s.widths.end(), head.begin(), head.end());
  s.widths.push_back(1);
  s.activation = activation;
  s.activate_output = false;
  s.output_gain = critic_gain;
  return s;
}

int PolicySpec::state_size() const {
  return core_spec().state_size() * (shared_core ? 1 : 2);
}

void PolicySpec::validate() const {
  RECUR_CHECK(obs_dim >= 1, "policy: obs_dim {} must be >= 1", obs_dim);
  RECUR_CHECK(action_dim >= 1, "policy: action_dim {} must be >= 1", action_dim);
  for (int w : encoder) RECUR_CHECK(w >= 1, "policy: encoder width {} must be >= 1", w);
  for (int w : head) RECUR_CHECK(w >= 1, "policy: head width {} must be >= 1", w);
  RECUR_CHECK(std::isfinite(obs_clip) && obs_clip > 0, "policy: obs_clip {} must be finite and > 0",
              obs_clip);
  core_spec().validate();
}

ObsNormalizerConfig PolicySpec::normalizer_config() const {
  ObsNormalizerConfig c;
  c.clip = obs_clip;
  return c;
}

std::map<std::string, std::string> PolicySpec::to_metadata() const {
  const std::string widths = fmt::format("{}", fmt::join(encoder, ","));
  std::map<std::string, std::string> m{
      {"policy.obs_dim", std::to_string(obs_dim)},
      {"policy.action_kind", action_kind == ActionKind::kDiscrete ? "discrete" : "continuous"},
      {"policy.action_dim", std::to_string(action_dim)},
      {"policy.encoder", widths},
      {"policy.head", fmt::format("{}", fmt::join(head, ","))},
      {"policy.activation", std::string(to_string(activation))},
      {"core.cell", std::string(to_string(cell))},
      {"core.input", std::to_string(feature_dim())},
      {"core.hidden", std::to_string(hidden)},
      {"core.layers", std::to_string(layers)},
      {"core.cell_clip", fmt::format("{}", cell_clip)},
      {"policy.shared_core", shared_core ? "true" : "false"},
      // Initializer settings: not needed to run the policy, kept so a run can be re-created.
      {"policy.log_std_init", fmt::format("{}", log_std_init)},
      {"policy.forget_bias", fmt::format("{}", forget_bias)},
      {"policy.actor_gain", fmt::format("{}", actor_gain)},
      {"policy.critic_gain", fmt::format("{}", critic_gain)}};
  // Only when set: checkpoints (and datasets, ONNX files) of default runs stay as they were.
  if (obs_clip != kDefaultObsClip) m["policy.obs_clip"] = fmt::format("{}", obs_clip);
  return m;
}

namespace {
const std::string& need(const std::map<std::string, std::string>& m, const std::string& key) {
  const auto it = m.find(key);
  RECUR_CHECK(it != m.end(),
              "checkpoint metadata has no '{}'; it was not written by recur's "
              "policy (or by an older format)",
              key);
  return it->second;
}
float to_float(const std::string& key, const std::string& text) {
  float v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  RECUR_CHECK(ec == std::errc() && end == text.data() + text.size(),
              "checkpoint metadata '{}' = '{}' is not a number", key, text);
  return v;
}
// Initializer settings are optional: older files or other tools may not carry them.
float optional_float(const std::map<std::string, std::string>& m, const std::string& key,
                     float fallback) {
  const auto it = m.find(key);
  return it == m.end() ? fallback : to_float(key, it->second);
}
int to_int(const std::string& key, const std::string& text) {
  int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  RECUR_CHECK(ec == std::errc() && end == text.data() + text.size(),
              "checkpoint metadata '{}' = '{}' is not an integer", key, text);
  return v;
}
}  // namespace

PolicySpec PolicySpec::from_metadata(const std::map<std::string, std::string>& m) {
  PolicySpec s;
  s.obs_dim = to_int("policy.obs_dim", need(m, "policy.obs_dim"));
  const auto& kind = need(m, "policy.action_kind");
  RECUR_CHECK(kind == "discrete" || kind == "continuous",
              "checkpoint metadata 'policy.action_kind' = '{}'; expected discrete or continuous",
              kind);
  s.action_kind = kind == "discrete" ? ActionKind::kDiscrete : ActionKind::kContinuous;
  s.action_dim = to_int("policy.action_dim", need(m, "policy.action_dim"));
  s.encoder.clear();
  const auto& widths = need(m, "policy.encoder");
  size_t start = 0;
  while (start < widths.size()) {
    const size_t comma = std::min(widths.find(',', start), widths.size());
    s.encoder.push_back(to_int("policy.encoder", widths.substr(start, comma - start)));
    start = comma + 1;
  }
  s.head.clear();
  if (const auto it = m.find("policy.head"); it != m.end()) {  // optional: older files have none
    const std::string& hw = it->second;
    size_t pos = 0;
    while (pos < hw.size()) {
      const size_t comma = std::min(hw.find(',', pos), hw.size());
      s.head.push_back(to_int("policy.head", hw.substr(pos, comma - pos)));
      pos = comma + 1;
    }
  }
  s.activation = parse_activation(need(m, "policy.activation"));
  s.cell = parse_cell_type(need(m, "core.cell"));
  s.hidden = to_int("core.hidden", need(m, "core.hidden"));
  s.layers = to_int("core.layers", need(m, "core.layers"));
  s.cell_clip = to_float("core.cell_clip", need(m, "core.cell_clip"));
  s.shared_core = need(m, "policy.shared_core") == "true";
  s.log_std_init = optional_float(m, "policy.log_std_init", s.log_std_init);
  s.forget_bias = optional_float(m, "policy.forget_bias", s.forget_bias);
  s.actor_gain = optional_float(m, "policy.actor_gain", s.actor_gain);
  s.critic_gain = optional_float(m, "policy.critic_gain", s.critic_gain);
  s.obs_clip = optional_float(m, "policy.obs_clip", kDefaultObsClip);  // older files: 10
  s.validate();
  return s;
}

TensorMap init_policy(const PolicySpec& spec, Rng& rng) {
  spec.validate();
  TensorMap out;
  auto add = [&](const TensorMap& m) { out.insert(m.begin(), m.end()); };
  add(ObsNormalizer(spec.obs_dim).to_tensors("obs_norm."));
  const int cores = spec.shared_core ? 1 : 2;
  for (int c = 0; c < cores; ++c) {
    const std::string p = c == 0 ? "" : "critic_";
    if (!spec.encoder.empty()) add(Mlp(spec.encoder_spec(), rng).to_tensors(p + "encoder."));
    add(CanonicalWeights::random(spec.core_spec(), rng, spec.forget_bias).to_tensors(p + "core."));
  }
  add(Mlp(spec.actor_head_spec(), rng).to_tensors("actor."));
  add(Mlp(spec.critic_head_spec(), rng).to_tensors("critic."));
  if (spec.action_kind == ActionKind::kContinuous)
    out["actor.log_std"] =
        Tensor({spec.action_dim},
               std::vector<float>(static_cast<size_t>(spec.action_dim), spec.log_std_init));
  return out;
}

std::vector<float> read_log_std(const PolicySpec& spec, const TensorMap& tensors) {
  const auto it = tensors.find("actor.log_std");
  RECUR_CHECK(it != tensors.end() && it->second.shape == std::vector<int64_t>{spec.action_dim},
              "tensor 'actor.log_std' is missing or not of shape [{}]", spec.action_dim);
  return it->second.data;
}

}  // namespace recur::policy
