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
  s.init = init;
  // The encoder's last layer is a hidden layer: under kPyTorch it keeps nn.Linear's scale.
  if (init == InitScheme::kPyTorch) s.output_gain = 1.0f;
  return s;
}

MlpSpec PolicySpec::actor_head_spec() const {
  MlpSpec s;
  s.widths = {hidden};
  s.widths.insert(s.widths.end(), head.begin(), head.end());
  s.widths.push_back(squash_head_width(squash, action_dim));
  s.activation = activation;
  s.activate_output = false;
  s.init = init;
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
  s.init = init;
  s.output_gain = critic_gain;
  return s;
}

int PolicySpec::state_size() const {
  return core_spec().state_size() * (shared_core ? 1 : 2);
}

namespace {
// The squash settings (PolicySpec::validate). Keys as the config and the metadata name them.
void validate_squash(const PolicySpec& s) {
  const auto d = static_cast<size_t>(s.action_dim);
  if (s.squash == Squash::kNone) {
    RECUR_CHECK(s.action_low.empty() && s.action_high.empty(),
                "policy: action_low / action_high ({} and {} values) are for a squashed actor "
                "only; set policy.squash to tanh_gaussian or tanh, or leave the bounds out",
                s.action_low.size(), s.action_high.size());
    return;
  }
  const std::string_view name = to_string(s.squash);
  RECUR_CHECK(s.action_kind == ActionKind::kContinuous,
              "policy: squash '{}' needs continuous actions, but action_kind is discrete; use "
              "squash: none for a discrete action space",
              name);
  RECUR_CHECK(s.action_low.size() == d && s.action_high.size() == d,
              "policy: squash '{}' needs action_low and action_high with action_dim = {} values "
              "each (the env's Box bounds), got {} and {}",
              name, d, s.action_low.size(), s.action_high.size());
  for (size_t j = 0; j < d; ++j)
    RECUR_CHECK(std::isfinite(s.action_low[j]) && std::isfinite(s.action_high[j]) &&
                    s.action_low[j] < s.action_high[j],
                "policy: squash '{}' needs a finite Box with low < high in every dimension; "
                "dimension {} has action_low {} and action_high {} (use squash: none for an "
                "unbounded action space)",
                name, j, s.action_low[j], s.action_high[j]);
  RECUR_CHECK(std::isfinite(s.exploration_noise) && s.exploration_noise >= 0,
              "policy: exploration_noise {} must be finite and >= 0 (normalized action units)",
              s.exploration_noise);
}
}  // namespace

void PolicySpec::validate() const {
  RECUR_CHECK(obs_dim >= 1, "policy: obs_dim {} must be >= 1", obs_dim);
  RECUR_CHECK(action_dim >= 1, "policy: action_dim {} must be >= 1", action_dim);
  for (int w : encoder) RECUR_CHECK(w >= 1, "policy: encoder width {} must be >= 1", w);
  for (int w : head) RECUR_CHECK(w >= 1, "policy: head width {} must be >= 1", w);
  RECUR_CHECK(std::isfinite(obs_clip) && obs_clip > 0, "policy: obs_clip {} must be finite and > 0",
              obs_clip);
  core_spec().validate();
  validate_squash(*this);
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
      // Initializer settings: not needed to run the policy, kept so a run can be re-created
      // (run.init_from lets them differ: agent/run/init_from.cc, check_spec).
      {"policy.log_std_init", fmt::format("{}", log_std_init)},
      {"policy.forget_bias", fmt::format("{}", forget_bias)},
      {"policy.actor_gain", fmt::format("{}", actor_gain)},
      {"policy.critic_gain", fmt::format("{}", critic_gain)}};
  // Only when set: checkpoints (and datasets, ONNX files) of default runs stay as they were.
  if (obs_clip != kDefaultObsClip) m["policy.obs_clip"] = fmt::format("{}", obs_clip);
  if (init != InitScheme::kOrthogonal) m["policy.init"] = std::string(to_string(init));
  if (has_layer_norm(cell)) m["core.norm_epsilon"] = fmt::format("{}", norm_epsilon);
  // Likewise: only squashed actors carry these. fmt's "{}" is the shortest text that reads back
  // as the same float32.
  if (squash != Squash::kNone) {
    m["policy.squash"] = std::string(to_string(squash));
    m["policy.action_low"] = fmt::format("{}", fmt::join(action_low, ","));
    m["policy.action_high"] = fmt::format("{}", fmt::join(action_high, ","));
    m["policy.exploration_noise"] = fmt::format("{}", exploration_noise);
  }
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
// "1,2,3" -> {1, 2, 3} through parse(key, item); "" -> {}.
template <typename Parse>
auto to_list(const std::string& key, const std::string& text, Parse parse) {
  std::vector<decltype(parse(key, text))> out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    out.push_back(parse(key, text.substr(start, comma - start)));
    start = comma + 1;
  }
  return out;
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
  s.encoder = to_list("policy.encoder", need(m, "policy.encoder"), to_int);
  s.head.clear();
  if (const auto it = m.find("policy.head"); it != m.end())  // optional: older files have none
    s.head = to_list("policy.head", it->second, to_int);
  s.activation = parse_activation(need(m, "policy.activation"));
  s.cell = parse_cell_type(need(m, "core.cell"));
  s.hidden = to_int("core.hidden", need(m, "core.hidden"));
  s.layers = to_int("core.layers", need(m, "core.layers"));
  s.cell_clip = to_float("core.cell_clip", need(m, "core.cell_clip"));
  s.norm_epsilon = optional_float(m, "core.norm_epsilon", kDefaultNormEpsilon);
  s.shared_core = need(m, "policy.shared_core") == "true";
  s.log_std_init = optional_float(m, "policy.log_std_init", s.log_std_init);
  s.forget_bias = optional_float(m, "policy.forget_bias", s.forget_bias);
  s.actor_gain = optional_float(m, "policy.actor_gain", s.actor_gain);
  s.critic_gain = optional_float(m, "policy.critic_gain", s.critic_gain);
  s.obs_clip = optional_float(m, "policy.obs_clip", kDefaultObsClip);  // older files: 10
  if (const auto it = m.find("policy.init"); it != m.end()) {          // absent: orthogonal
    try {
      s.init = parse_init_scheme(it->second);
    } catch (const Error& e) {
      throw Error(fmt::format("checkpoint metadata 'policy.init': {}", e.what()));
    }
  }
  if (const auto it = m.find("policy.squash"); it != m.end()) {  // absent: unsquashed
    try {
      s.squash = parse_squash(it->second);
    } catch (const Error& e) {
      throw Error(fmt::format("checkpoint metadata 'policy.squash': {}", e.what()));
    }
  }
  // Read whenever present, so that validate() names bounds left without a squash.
  if (s.squash != Squash::kNone || m.count("policy.action_low") || m.count("policy.action_high")) {
    s.action_low = to_list("policy.action_low", need(m, "policy.action_low"), to_float);
    s.action_high = to_list("policy.action_high", need(m, "policy.action_high"), to_float);
  }
  s.exploration_noise = optional_float(m, "policy.exploration_noise", s.exploration_noise);
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
  if (has_log_std(spec))  // a squashed actor's log-std is a head output
    out["actor.log_std"] =
        Tensor({spec.action_dim},
               std::vector<float>(static_cast<size_t>(spec.action_dim), spec.log_std_init));
  return out;
}

std::vector<float> read_log_std(const PolicySpec& spec, const TensorMap& tensors) {
  if (spec.squash != Squash::kNone) return {};
  const auto it = tensors.find("actor.log_std");
  RECUR_CHECK(it != tensors.end() && it->second.shape == std::vector<int64_t>{spec.action_dim},
              "tensor 'actor.log_std' is missing or not of shape [{}]", spec.action_dim);
  return it->second.data;
}

}  // namespace recur::policy
