#include "agent/run/init_from.h"

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <set>
#include <vector>

#include "agent/policy_target.h"
#include "agent/train_job.h"
#include "core/error.h"

namespace recur::agent {

namespace {

// "policy.hidden: 64 here, 128 in the checkpoint; ..." for every spec key that differs.
std::string spec_differences(const policy::PolicySpec& ours, const policy::PolicySpec& theirs) {
  const auto a = ours.to_metadata(), b = theirs.to_metadata();
  std::set<std::string> keys;
  for (const auto& [k, v] : a) keys.insert(k);
  for (const auto& [k, v] : b) keys.insert(k);
  std::vector<std::string> parts;
  for (const auto& k : keys) {
    const auto ia = a.find(k), ib = b.find(k);
    const std::string va = ia == a.end() ? "(unset)" : ia->second;
    const std::string vb = ib == b.end() ? "(unset)" : ib->second;
    if (va != vb) parts.push_back(fmt::format("{}: {} here, {} in the checkpoint", k, va, vb));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace

std::string start_from_policy(const TrainConfig& config, Algorithm& algo) {
  const std::string& from = config.run.init_from;
  if (from.empty()) return {};
  PolicyTarget target;
  try {
    target = load_policy_target(from, "", /*foreign_env_ok=*/true);
  } catch (const Error& e) {
    throw Error(fmt::format("run.init_from = {}: {}", from, e.what()));
  }
  const std::string path = target.path.string();
  RECUR_CHECK(target.checkpoint.spec == algo.spec(),
              "run.init_from = {}: its policy does not fit this config's ({}). Start from a run "
              "of the same policy.* settings and env spaces, or drop run.init_from",
              path, spec_differences(algo.spec(), target.checkpoint.spec));
  policy::TensorMap tensors;
  for (const auto& [name, t] : target.checkpoint.tensors)
    if (!name.starts_with("optim.")) tensors.emplace(name, t);  // a fresh optimizer
  RECUR_CHECK(algo.load_policy(tensors),
              "run.init_from = {}: algo.type {} cannot start from a policy checkpoint (it holds "
              "the actor, not the critics this algorithm trains beside it); drop run.init_from, "
              "or resume that run with `recur train --resume`",
              path, config.algo.type);
  if (!target.env_id.empty() && target.env_id != config.env.id)
    spdlog::warn("run.init_from: {} was trained on {}; this run trains on {} (same spaces)", path,
                 target.env_id, config.env.id);
  const auto steps = target.checkpoint.metadata.find(kMetaEnvSteps);
  spdlog::info("run.init_from: starting from {}{}", path,
               steps == target.checkpoint.metadata.end()
                   ? std::string()
                   : fmt::format(" (its run's env step {})", steps->second));
  return path;
}

}  // namespace recur::agent
