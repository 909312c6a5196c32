#include "envs/registry.h"

#include <algorithm>

#include "core/error.h"
#include "core/text.h"
#include "envs/wrappers/previous_step.h"

namespace recur::envs {

void Registry::add(EnvSpec spec) {
  const std::string from = spec.source.empty() ? "recur's built-ins" : spec.source;
  RECUR_CHECK(!spec.id.empty(),
              "{}: an env spec has an empty id; give it a Gymnasium-style id "
              "such as \"TMaze-v0\"",
              from);
  RECUR_CHECK(spec.factory != nullptr, "{}: env {} has no factory; set EnvSpec::factory", from,
              spec.id);
  if (const EnvSpec* old = find(spec.id)) {
    throw Error(fmt::format(
        "env id '{}' from {} is already registered by {}; rename one of them (ids are unique "
        "across recur's built-ins, plugins and the program)",
        spec.id, from, old->source.empty() ? "recur's built-ins" : old->source));
  }
  specs_.push_back(std::move(spec));
}

const EnvSpec* Registry::find(std::string_view id) const {
  const auto it =
      std::find_if(specs_.begin(), specs_.end(), [&](const EnvSpec& s) { return s.id == id; });
  return it == specs_.end() ? nullptr : &*it;
}

const EnvSpec& Registry::at(std::string_view id) const {
  if (const EnvSpec* spec = find(id)) return *spec;
  const auto all = ids();
  const auto near = closest_matches(id, all);
  throw Error(
      fmt::format("unknown env id '{}'. {}Run `recur envs` to list all {} envs.", id,
                  near.empty() ? std::string() : fmt::format("Closest known ids: {}. ", join(near)),
                  all.size()));
}

std::vector<std::string> Registry::ids() const {
  std::vector<std::string> out;
  for (const auto& s : specs_) out.push_back(s.id);
  return out;
}

std::unique_ptr<Env> Registry::make(std::string_view id, const Options& options) const {
  const EnvSpec& spec = at(id);
  OptionReader reader(options, "env " + spec.id);
  const long long limit = reader.get_int("max_episode_steps", spec.max_episode_steps);
  RECUR_CHECK(limit >= 0 && limit <= 1'000'000'000,
              "env {}: max_episode_steps = {}; use 0 (no limit) or a positive step count", spec.id,
              limit);
  // Generic inputs of memory-based RL, for every env (envs/wrappers/previous_step.h).
  const bool prev_action = reader.get_bool("prev_action", false);
  const bool prev_reward = reader.get_bool("prev_reward", false);
  std::unique_ptr<Env> env;
  if (spec.source.empty()) {
    env = spec.factory(reader);
  } else {
    // A user's factory: whatever it throws is named with the env and where it came from.
    try {
      env = spec.factory(reader);
    } catch (const Error& e) {
      throw Error(fmt::format("env {} ({}): {}", spec.id, spec.source, e.what()));
    } catch (const std::exception& e) {
      throw Error(
          fmt::format("env {} ({}) threw in its constructor: {}", spec.id, spec.source, e.what()));
    }
    RECUR_CHECK(env != nullptr, "env {} ({}): the factory returned no env", spec.id, spec.source);
  }
  reader.reject_unknown();
  env = with_previous_step(std::move(env), prev_action, prev_reward);
  env->id_ = spec.id;
  env->max_episode_steps_ = static_cast<int>(limit);
  return env;
}

Registry& registry() {
  static Registry instance = [] {
    Registry r;
    register_classic_control(r);
    register_memory(r);
    register_box2d(r);
    register_popgym(r);
    register_mujoco(r);
    return r;
  }();
  return instance;
}

}  // namespace recur::envs
