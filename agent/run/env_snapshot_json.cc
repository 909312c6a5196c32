#include "agent/run/env_snapshot_json.h"

#include <limits>

#include "agent/run/json_read.h"

namespace recur::agent {

using nlohmann::json;

json rng_json(const Rng::State& s) {
  return json::array({s[0], s[1], s[2], s[3]});
}

void write_env_snapshot(const envs::BatchEnv& venv, json& j) {
  if (!venv.can_snapshot()) {
    j["envs"] = nullptr;
    j["venv_episode_start"] = nullptr;
    return;
  }
  const auto snap = venv.snapshot();
  json envs = json::array();
  for (const auto& e : snap.envs)
    envs.push_back({{"state", e.state},
                    {"rng", rng_json(e.rng)},
                    {"seeded", e.seeded},
                    {"has_reset", e.has_reset},
                    {"needs_reset", e.needs_reset},
                    {"elapsed_steps", e.elapsed_steps},
                    {"episode_return", e.episode_return}});
  j["envs"] = envs;
  j["venv_episode_start"] = snap.episode_start;
}

std::optional<envs::BatchEnv::Snapshot> read_env_snapshot(const json& j) {
  using namespace json_read;
  if (j.at("envs").is_null()) return std::nullopt;
  constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
  envs::BatchEnv::Snapshot out;
  for (const json& e : array(j["envs"], "envs")) {
    envs::Env::Snapshot s;
    s.state = reals(e.at("state"), "envs[].state");
    s.rng = rng_state(e.at("rng"), "envs[].rng");
    s.seeded = boolean(e.at("seeded"), "envs[].seeded");
    s.has_reset = boolean(e.at("has_reset"), "envs[].has_reset");
    s.needs_reset = boolean(e.at("needs_reset"), "envs[].needs_reset");
    s.elapsed_steps =
        static_cast<int>(integer(e.at("elapsed_steps"), "envs[].elapsed_steps", 0, kMaxInt));
    s.episode_return = real(e.at("episode_return"), "envs[].episode_return");
    out.envs.push_back(std::move(s));
  }
  out.episode_start = flags(j.at("venv_episode_start"), "venv_episode_start");
  return out;
}

}  // namespace recur::agent
