#include "agent/record/recorder.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <system_error>

#include "agent/record/film.h"
#include "agent/record/video_writer.h"
#include "core/error.h"
#include "core/rng.h"
#include "envs/registry.h"
#include "envs/render/renderer.h"
#include "policy/policy_actor.h"

namespace recur::agent::record {
namespace {

constexpr uint64_t kActionStream = 77;  // derive_seed(episode seed, 77): the episode's actions

std::string trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

}  // namespace

bool capped_cubic_schedule(int episode) {
  if (episode < 0) return false;
  if (episode >= 1000) return episode % 1000 == 0;
  const int root = static_cast<int>(std::lround(std::cbrt(static_cast<double>(episode))));
  return root * root * root == episode;
}

bool VideoSchedule::films(int episode) const {
  switch (kind) {
    case Kind::kNone:
      return false;
    case Kind::kList:
      for (const int e : episodes)
        if (e == episode) return true;
      return false;
    case Kind::kEvery:
      return episode >= 0 && episode % every == 0;
    case Kind::kCappedCubic:
      return capped_cubic_schedule(episode);
  }
  return false;
}

VideoSchedule VideoSchedule::list(const std::string& comma_separated) {
  VideoSchedule s{Kind::kList, {}, 1};
  size_t start = 0;
  while (start <= comma_separated.size()) {
    const size_t end = std::min(comma_separated.find(',', start), comma_separated.size());
    const std::string item = trimmed(comma_separated.substr(start, end - start));
    int value = -1;
    size_t used = 0;
    try {
      value = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    RECUR_CHECK(used == item.size() && !item.empty() && value >= 0,
                "--video-episodes '{}': '{}' is not an episode index (a number >= 0); write e.g. "
                "--video-episodes 0,3,10",
                comma_separated, item);
    s.episodes.push_back(value);
    start = end + 1;
  }
  return s;
}

VideoSchedule VideoSchedule::every_k(int k) {
  RECUR_CHECK(k >= 1, "--video-every {}: it must be >= 1 (1 = every episode)", k);
  return {Kind::kEvery, {}, k};
}

double RecordSummary::mean_return() const {
  double s = 0;
  for (const double r : returns) s += r;
  return returns.empty() ? 0 : s / static_cast<double>(returns.size());
}

double RecordSummary::std_return() const {
  const double m = mean_return();
  double s = 0;
  for (const double r : returns) s += (r - m) * (r - m);
  return returns.empty() ? 0 : std::sqrt(s / static_cast<double>(returns.size()));
}

void check_policy_fits_env(const policy::PolicySpec& spec, const std::string& policy_name,
                           const envs::Env& env) {
  check_policy_fits(spec, policy_name, env.id(), env.observation_space(), env.action_space());
}

void check_policy_fits(const policy::PolicySpec& spec, const std::string& policy_name,
                       const std::string& env_id, const envs::Space& obs, const envs::Space& act) {
  const bool obs_ok =
      !obs.is_discrete() && obs.shape().size() == 1 && obs.flat_size() == spec.obs_dim;
  const bool act_ok = spec.action_kind == policy::ActionKind::kDiscrete
                          ? act.is_discrete() && act.n() == spec.action_dim
                          : !act.is_discrete() && act.flat_size() == spec.action_dim;
  const std::string policy_actions =
      spec.action_kind == policy::ActionKind::kDiscrete
          ? fmt::format("Discrete({})", spec.action_dim)
          : fmt::format("continuous actions of size {}", spec.action_dim);
  RECUR_CHECK(obs_ok && act_ok,
              "{} does not fit env {}: the policy takes observations of size {} and gives {}; "
              "{} has observation space {} and action space {}. Pass --env with an env of the "
              "policy's spaces (by default the one it was trained on).",
              policy_name, env_id, spec.obs_dim, policy_actions, env_id, obs.to_string(),
              act.to_string());
}

Recorder::Recorder(const RecordConfig& config, const policy::PolicySpec& spec,
                   const policy::TensorMap& tensors)
    : config_(config) {
  init_env(nullptr);
  init_policy(spec, tensors);
}

Recorder::Recorder(const RecordConfig& config) : config_(config) {
  init_env(nullptr);
  check_no_state();
}

Recorder::Recorder(const RecordConfig& config, std::unique_ptr<envs::Env> env,
                   const policy::PolicySpec& spec, const policy::TensorMap& tensors)
    : config_(config) {
  RECUR_CHECK_ARG(env != nullptr, "Recorder: the env given is null");
  init_env(std::move(env));
  init_policy(spec, tensors);
}

Recorder::Recorder(const RecordConfig& config, std::unique_ptr<envs::Env> env) : config_(config) {
  RECUR_CHECK_ARG(env != nullptr, "Recorder: the env given is null");
  init_env(std::move(env));
  check_no_state();
}

Recorder::~Recorder() = default;

void Recorder::init_env(std::unique_ptr<envs::Env> env) {
  RECUR_CHECK(config_.episodes >= 1, "recording needs at least 1 episode, got {}",
              config_.episodes);
  env_ = env ? std::move(env) : envs::make(config_.env_id, config_.env_options);
  const auto adim = static_cast<size_t>(env_->action_dim());
  action_.assign(adim, 0.0f);
  log_prob_.assign(1, 0.0f);
  value_.assign(1, 0.0f);
  start_.assign(1, 1);
}

void Recorder::init_policy(const policy::PolicySpec& spec, const policy::TensorMap& tensors) {
  check_policy_fits_env(spec, config_.policy_name, *env_);
  actor_ = std::make_unique<policy::PolicyActor>(spec, 1, config_.placement);
  actor_->load(tensors);
  state_.assign(static_cast<size_t>(spec.state_size()), 0.0f);
}

void Recorder::check_no_state() const {
  RECUR_CHECK(!config_.record_state,
              "recording the policy state needs a policy: the random policy has none (drop "
              "--record-state or record a checkpoint)");
}

int Recorder::state_dim() const {
  return actor_ && config_.record_state ? actor_->spec().state_size() : 0;
}

std::string Recorder::algorithm_name() const {
  if (!actor_) return "random";
  return "recur-ppo-" + std::string(policy::to_string(actor_->spec().cell));
}

std::string Recorder::policy_json() const {
  nlohmann::ordered_json j;
  j["policy"] = actor_ ? "checkpoint" : "random";
  if (actor_) {
    j["checkpoint"] = config_.policy_name;
    nlohmann::ordered_json spec;
    for (const auto& [k, v] : actor_->spec().to_metadata()) spec[k] = v;
    j["spec"] = spec;
    j["deterministic"] = config_.deterministic;
  }
  j["seed"] = config_.seed;
  j["episode_seed"] = "seed + episode index (env.reset); actions from Rng(derive_seed(that, 77))";
  j["state_dim"] = state_dim();
  if (state_dim() > 0)
    j["state_layout"] =
        "per row: actor core h of layers 0..L-1 (L*H), then for lstm c of layers 0..L-1 (L*H), "
        "then the critic core likewise when policy.shared_core is false; row t = the state fed "
        "to the policy with observations[t], row 0 = zeros";
  return j.dump();
}

std::string Recorder::video_path(int index) const {
  return (std::filesystem::path(config_.video_dir) / video_file_name(config_.name_prefix, index))
      .string();
}

Episode Recorder::record_episode(int index, const std::string& video_path) {
  RECUR_CHECK_ARG(index >= 0, "record_episode: episode index {} must be >= 0", index);
  envs::Env& env = *env_;
  Episode ep;
  ep.seed = config_.seed + static_cast<uint64_t>(index);
  ep.obs_dim = env.obs_dim();
  ep.action_dim = env.action_dim();
  ep.state_dim = state_dim();
  Rng rng(derive_seed(ep.seed, kActionStream));

  // Frames: one of the reset state, one after every step (N+1, aligned with observations).
  std::unique_ptr<envs::render::Renderer> renderer;
  std::unique_ptr<VideoWriter> video;
  if (!video_path.empty()) {
    const envs::RenderInfo info = env.render_info();
    RECUR_CHECK(info.renders(), "env {} does not render, so it cannot be filmed (drop --video)",
                env.id());
    renderer = std::make_unique<envs::render::Renderer>(env);
    video = std::make_unique<VideoWriter>(video_path, renderer->info().width,
                                          renderer->info().height, renderer->info().fps);
  }

  // Rows grow by amortized doubling; the registered time limit is the usual episode length.
  const auto rows = static_cast<size_t>(env.max_episode_steps() > 0 ? env.max_episode_steps() : 0);
  ep.observations.reserve((rows + 1) * ep.obs_dim);
  ep.actions.reserve(rows * ep.action_dim);
  ep.rewards.reserve(rows);
  ep.terminations.reserve(rows);
  ep.truncations.reserve(rows);
  ep.episode_start.reserve(rows + 1);
  if (ep.state_dim > 0) ep.policy_state.reserve((rows + 1) * ep.state_dim);

  std::span<const float> obs = env.reset(ep.seed);
  ep.observations.insert(ep.observations.end(), obs.begin(), obs.end());
  ep.episode_start.push_back(1);
  if (actor_) actor_->reset(0);  // row 0's state is the zero initial state
  start_[0] = 1;
  if (video) video->write(renderer->render(env));
  for (;;) {
    if (ep.state_dim > 0) {
      actor_->get_states(state_);
      ep.policy_state.insert(ep.policy_state.end(), state_.begin(), state_.end());
    }
    if (actor_)
      actor_->act(obs, start_, rng, config_.deterministic, action_, log_prob_, value_);
    else
      env.action_space().sample(rng, action_);
    start_[0] = 0;
    ep.actions.insert(ep.actions.end(), action_.begin(), action_.end());
    const envs::StepResult r = env.step(action_);
    ep.rewards.push_back(r.reward);
    ep.terminations.push_back(r.terminated ? 1 : 0);
    ep.truncations.push_back(r.truncated ? 1 : 0);
    ep.observations.insert(ep.observations.end(), r.obs.begin(), r.obs.end());
    ep.episode_start.push_back(0);
    if (video) video->write(renderer->render(env));
    obs = r.obs;
    if (r.done()) break;
  }
  // The last row: the state the policy carries with the final observation.
  if (ep.state_dim > 0) {
    actor_->get_states(state_);
    ep.policy_state.insert(ep.policy_state.end(), state_.begin(), state_.end());
  }
  if (video) video->close();
  return ep;
}

RecordSummary Recorder::run(const std::function<void(const Episode&)>& sink) {
  namespace fs = std::filesystem;
  RecordSummary summary;
  const bool filming =
      !config_.video_dir.empty() && config_.video.kind != VideoSchedule::Kind::kNone;
  bool created_dir = false;
  std::string current;  // the video being written
  try {
    if (filming && !fs::exists(config_.video_dir)) {
      std::error_code ec;
      fs::create_directories(config_.video_dir, ec);
      RECUR_CHECK(!ec, "cannot create the video directory {}: {}", config_.video_dir, ec.message());
      created_dir = true;
    }
    for (int i = 0; i < config_.episodes; ++i) {
      current = filming && config_.video.films(i) ? video_path(i) : "";
      const Episode ep = record_episode(i, current);
      if (!current.empty()) summary.videos.push_back(current);
      current.clear();
      summary.returns.push_back(ep.total_reward());
      summary.lengths.push_back(ep.steps());
      summary.steps += ep.steps();
      if (sink) sink(ep);
    }
  } catch (...) {
    // Nothing half-written: the videos of this run go, and the directory if this run made it.
    std::error_code ec;
    for (const auto& v : summary.videos) fs::remove(v, ec);
    if (!current.empty()) fs::remove(current, ec);
    if (created_dir && fs::is_empty(config_.video_dir, ec)) fs::remove(config_.video_dir, ec);
    throw;
  }
  return summary;
}

double record_eval_video(const policy::PolicySpec& spec, const policy::TensorMap& tensors,
                         const std::string& env_id, const Options& env_options, uint64_t eval_seed,
                         bool deterministic, const std::string& path) {
  const std::unique_ptr<envs::Env> env = envs::make(env_id, env_options);
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  // The evaluator resets its env 0 with derive_seed(eval_seed, 0); film_episode does the same.
  return film_episode(*env, spec, tensors, eval_seed, deterministic, path);
}

}  // namespace recur::agent::record
