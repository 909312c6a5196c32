#include "agent/policy_target.h"

#include <algorithm>

#include "agent/train_job.h"
#include "core/error.h"
#include "envs/registry.h"

namespace recur::agent {

PolicyTarget load_policy_target(const std::string& target, const std::string& env_override,
                                bool foreign_env_ok) {
  std::filesystem::path path = target;
  if (std::filesystem::is_directory(path)) {
    const auto best = path / "checkpoints" / "best.safetensors";
    const auto latest = path / "checkpoints" / "latest.safetensors";
    RECUR_CHECK(std::filesystem::exists(best) || std::filesystem::exists(latest),
                "{} has no checkpoints/best.safetensors or checkpoints/latest.safetensors; "
                "pass a run directory of `recur train` or a checkpoint file",
                path.string());
    path = std::filesystem::exists(best) ? best : latest;
  }
  PolicyTarget t;
  t.path = path;
  t.checkpoint = policy::load_policy(path);
  t.env_options.source = path.string();
  const auto& meta = t.checkpoint.metadata;
  const auto env_it = meta.find(kMetaEnvId);
  const std::string recorded = env_it != meta.end() ? env_it->second : std::string();
  t.env_id = !env_override.empty() ? env_override : recorded;
  if (const auto src = meta.find(kMetaEnvSource); src != meta.end()) t.env_source = src->second;
  RECUR_CHECK(t.env_source.empty() || !env_override.empty() || foreign_env_ok,
              "{} was trained on an env from {} ({}), which the recur command line cannot "
              "rebuild; evaluate or record it from Python (recur.evaluate(run, env=...), "
              "recur.record(run, env=...)), or name a registered env of the same spaces with "
              "--env",
              path.string(), t.env_source, recorded);
  if (!t.env_id.empty() && t.env_id == recorded) {
    const auto opt_it = meta.find(kMetaEnvOptions);
    if (opt_it != meta.end()) {
      const std::string& s = opt_it->second;  // "k=v;k=v"
      for (size_t start = 0; start < s.size();) {
        const size_t end = std::min(s.find(';', start), s.size());
        if (end > start) {
          auto [k, v] = parse_key_value(s.substr(start, end - start));
          t.env_options.set(k, v);
        }
        start = end + 1;
      }
    }
  }
  return t;
}

policy::convert::OnnxExportOptions onnx_export_options(const PolicyTarget& target) {
  policy::convert::OnnxExportOptions options;
  options.metadata = target.checkpoint.metadata;
  options.metadata["recur.source"] = target.path.string();
  const policy::PolicySpec& spec = target.checkpoint.spec;
  if (spec.action_kind != policy::ActionKind::kContinuous || target.env_id.empty() ||
      !target.env_source.empty() || !envs::registry().find(target.env_id))
    return options;
  const auto env = envs::make(target.env_id, target.env_options);
  const envs::Space& space = env->action_space();
  RECUR_CHECK(!space.is_discrete() && space.flat_size() == spec.action_dim,
              "{}: the policy gives {} continuous actions, but its env {} has action space {}",
              target.path.string(), spec.action_dim, target.env_id, space.to_string());
  options.action_low = space.low();
  options.action_high = space.high();
  return options;
}

}  // namespace recur::agent
