#include "envs/registry.h"

#include <algorithm>

#include "core/error.h"
#include "core/text.h"

namespace recur::envs {

void Registry::add(EnvSpec spec) {
  RECUR_ASSERT(!spec.id.empty() && spec.factory);
  RECUR_ASSERT(find(spec.id) == nullptr);
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
  std::unique_ptr<Env> env = spec.factory(reader);
  reader.reject_unknown();
  env->id_ = spec.id;
  env->max_episode_steps_ = static_cast<int>(limit);
  return env;
}

const Registry& registry() {
  static const Registry instance = [] {
    Registry r;
    register_classic_control(r);
    register_memory(r);
    register_box2d(r);
    return r;
  }();
  return instance;
}

}  // namespace recur::envs
