// The envs' part of an algorithm's resume JSON (PPO's trainer state, the off-policy trainer's
// state): "envs", each env's snapshot, or null when the batch cannot snapshot (envs from
// Python: they restart on resume), and "venv_episode_start", the batch's flags (null with it).
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

#include "core/rng.h"
#include "envs/batch_env.h"

namespace recur::agent {

nlohmann::json rng_json(const Rng::State& s);

void write_env_snapshot(const envs::BatchEnv& venv, nlohmann::json& j);
// nullopt where "envs" is null; recur::Error naming a malformed value.
std::optional<envs::BatchEnv::Snapshot> read_env_snapshot(const nlohmann::json& j);

}  // namespace recur::agent
