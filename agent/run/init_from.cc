#include "agent/run/init_from.h"

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <map>
#include <set>
#include <vector>

#include "agent/policy_target.h"
#include "agent/run/resume_point.h"
#include "agent/run/run_dir.h"
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

// The loaded policy must compute what this config's would, shapes and squashing included. The
// settings that only initialize a fresh policy (PolicySpec::to_metadata's initializer group:
// log_std_init, forget_bias, actor_gain, critic_gain, and init) are replaced by the loaded
// weights, and TD3's exploration_noise is how it explores from here on: a fine-tune may change
// them, and is told which it changed.
void check_spec(const std::string& path, const policy::PolicySpec& theirs, Algorithm& algo) {
  const policy::PolicySpec& ours = algo.spec();
  policy::PolicySpec fitted = theirs;
  fitted.log_std_init = ours.log_std_init;
  fitted.forget_bias = ours.forget_bias;
  fitted.actor_gain = ours.actor_gain;
  fitted.critic_gain = ours.critic_gain;
  fitted.init = ours.init;
  fitted.exploration_noise = ours.exploration_noise;
  RECUR_CHECK(fitted == ours,
              "run.init_from = {}: its policy does not fit this config's ({}). Start from a run "
              "of the same policy.* settings and env spaces, or drop run.init_from",
              path, spec_differences(ours, fitted));
  if (theirs != ours)
    spdlog::info(
        "run.init_from: {} loads, though settings differ that its weights replace "
        "(initializers) or that only set how TD3 explores: {}",
        path, spec_differences(ours, theirs));
}

void warn_other_env(const std::string& path, const std::string& env_id, const TrainConfig& config) {
  if (!env_id.empty() && env_id != config.env.id)
    spdlog::warn("run.init_from: {} was trained on {}; this run trains on {} (same spaces)", path,
                 env_id, config.env.id);
}

std::string at_step(const std::map<std::string, std::string>& metadata) {
  const auto steps = metadata.find(kMetaEnvSteps);
  return steps == metadata.end() ? std::string()
                                 : fmt::format(" (its run's env step {})", steps->second);
}

// algo.type of the run's config.yaml (absent: PPO, the default).
std::string recorded_algo_type(const RunDir& dir) {
  try {
    const YAML::Node type = YAML::LoadFile(dir.config_yaml().string())["algo"]["type"];
    return type ? type.as<std::string>() : std::string("ppo");
  } catch (const YAML::Exception& e) {
    throw Error(fmt::format("its {} does not read: {}", dir.config_yaml().string(), e.what()));
  }
}

// An off-policy algorithm: a run directory's latest learner state, of which the learned
// parameters load (the critics are in no policy checkpoint; the best one's are not kept).
std::string start_from_state(const TrainConfig& config, Algorithm& algo) {
  const std::string& from = config.run.init_from;
  RECUR_CHECK(std::filesystem::is_directory(from),
              "run.init_from = {}: algo.type {} starts from a run directory (its latest state: the "
              "actor, the critics and their targets), not {}; give the directory of a {} run",
              from, config.algo.type,
              std::filesystem::exists(from) ? "a checkpoint file, which holds the actor alone"
                                            : "a path that does not exist",
              config.algo.type);
  ResumePoint point;
  AlgorithmState state;
  const std::string remedy = "start from another run, or drop run.init_from";
  try {
    const RunDir dir = RunDir::open(from);
    // The algorithm first: a run of another one also has another policy, but that is the cause.
    const std::string algo_type = recorded_algo_type(dir);
    RECUR_CHECK(algo_type == config.algo.type,
                "it is a run of algo.type {} and this run is algo.type {}: start from a {} run",
                algo_type, config.algo.type, config.algo.type);
    point = read_resume_point(dir, remedy);
    RECUR_CHECK(!point.state.trainer_tensors.empty() && !point.state.trainer_states.empty(),
                "its trainer state holds no learner tensors; {}", remedy);
    state.json = point.state.trainer_states.front();
    state.tensors = load_trainer_tensors(dir, point.state);
  } catch (const Error& e) {
    throw Error(fmt::format("run.init_from = {}: {}", from, e.what()));
  }
  check_spec(from, point.checkpoint.spec, algo);
  try {
    algo.load_trained(state);
  } catch (const Error& e) {
    throw Error(fmt::format("run.init_from = {}: {}", from, e.what()));
  }
  const auto env = point.checkpoint.metadata.find(kMetaEnvId);
  warn_other_env(from, env == point.checkpoint.metadata.end() ? "" : env->second, config);
  spdlog::info("run.init_from: starting from {}'s latest state{}", from,
               at_step(point.checkpoint.metadata));
  return from;
}

}  // namespace

std::string start_from_policy(const TrainConfig& config, Algorithm& algo) {
  const std::string& from = config.run.init_from;
  if (from.empty()) return {};
  if (algo.starts_from_state()) return start_from_state(config, algo);
  PolicyTarget target;
  try {
    target = load_policy_target(from, "", /*foreign_env_ok=*/true);
  } catch (const Error& e) {
    throw Error(fmt::format("run.init_from = {}: {}", from, e.what()));
  }
  const std::string path = target.path.string();
  check_spec(path, target.checkpoint.spec, algo);
  policy::TensorMap tensors;
  for (const auto& [name, t] : target.checkpoint.tensors)
    if (!name.starts_with("optim.")) tensors.emplace(name, t);  // a fresh optimizer
  RECUR_CHECK(algo.load_policy(tensors),
              "run.init_from = {}: algo.type {} cannot start from a policy checkpoint; drop "
              "run.init_from",
              path, config.algo.type);
  warn_other_env(path, target.env_id, config);
  spdlog::info("run.init_from: starting from {}{}", path, at_step(target.checkpoint.metadata));
  return path;
}

}  // namespace recur::agent
