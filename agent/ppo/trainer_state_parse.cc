// Reading PPO's trainer state back (trainer_state.h); the writer is PpoTrainer::save_state.
// Numbers go through agent/run/json_read.h's checked readers; any other JSON exception becomes a
// recur::Error.
#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "agent/ppo/trainer_state.h"
#include "agent/run/env_snapshot_json.h"
#include "agent/run/json_read.h"
#include "core/error.h"

namespace recur::agent {
namespace {
using nlohmann::json;

using json_read::array;
using json_read::boolean;
using json_read::flags;
using json_read::floats;
using json_read::integer;
using json_read::real;
using json_read::reals;
Rng::State rng_from(const json& j, const char* what) {
  return json_read::rng_state(j, what);
}

}  // namespace

TrainerState parse_trainer_state(const std::string& text) {
  TrainerState t;
  try {
    const json j = json::parse(text);
    RECUR_CHECK(
        j.is_object() && j.contains("format") &&
            (j["format"] == "recur.trainer_state/1" || j["format"] == "recur.trainer_state/2"),
        "unknown trainer state format {} (this build reads recur.trainer_state/1 and /2: "
        "a newer recur wrote it?)",
        j.is_object() ? j.value("format", json()).dump() : j.dump());
    t.bulk_in_tensors = j["format"] == "recur.trainer_state/2";
    t.env_steps = integer(j.at("env_steps"), "env_steps", 0);
    t.local_env_steps = j.contains("local_env_steps")
                            ? integer(j["local_env_steps"], "local_env_steps", 0)
                            : t.env_steps;
    constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
    t.rank = j.contains("rank") ? static_cast<int>(integer(j["rank"], "rank", 0, kMaxInt)) : 0;
    t.world_size = j.contains("world_size")
                       ? static_cast<int>(integer(j["world_size"], "world_size", 1, kMaxInt))
                       : 1;
    t.policy_version =
        j.contains("policy_version") ? integer(j["policy_version"], "policy_version", 0) : 0;
    if (auto snap = read_env_snapshot(j)) {
      t.envs = std::move(snap->envs);
      t.venv_episode_start = std::move(snap->episode_start);
    }
    if (!t.bulk_in_tensors)
      t.recurrent_states = floats(j.at("recurrent_states"), "recurrent_states");
    const json& on = j.at("obs_norm");
    t.obs_mean = reals(on.at("mean"), "obs_norm.mean");
    t.obs_var = reals(on.at("var"), "obs_norm.var");
    t.obs_count = real(on.at("count"), "obs_norm.count");
    const json& rn = j.at("reward_norm");
    t.reward_running_return = reals(rn.at("running_return"), "reward_norm.running_return");
    t.reward_mean = real(rn.at("mean"), "reward_norm.mean");
    t.reward_var = real(rn.at("var"), "reward_norm.var");
    t.reward_count = real(rn.at("count"), "reward_norm.count");
    const json& loop = j.at("loop");
    t.loop_rng = rng_from(loop.at("rng"), "loop.rng");
    t.next_episode_start = flags(loop.at("next_episode_start"), "loop.next_episode_start");
    t.loop_started = boolean(loop.at("started"), "loop.started");
    const json& ppo = j.at("ppo");
    t.ppo_rng = rng_from(ppo.at("rng"), "ppo.rng");
    t.nonfinite_streak =
        static_cast<int>(integer(ppo.at("nonfinite_streak"), "ppo.nonfinite_streak", 0, kMaxInt));
    if (j.contains("pending") && !j["pending"].is_null()) {
      RECUR_CHECK(t.bulk_in_tensors, "pending: a rollout kept for the learner needs format 2");
      const json& p = j["pending"];
      TrainerState::Pending pending;
      pending.version = integer(p.at("version"), "pending.version", 0);
      pending.env_steps = integer(p.at("env_steps"), "pending.env_steps", 0);
      pending.steps = static_cast<int>(integer(p.at("steps"), "pending.steps", 1, kMaxInt));
      pending.has_reset_steps = boolean(p.at("has_reset_steps"), "pending.has_reset_steps");
      t.pending = pending;
    }
    if (!t.bulk_in_tensors) {
      RECUR_CHECK(j.at("adam").is_object(), "adam is {}, not a map", j["adam"].dump());
      for (const auto& [name, v] : j["adam"].items()) t.adam[name] = floats(v, "adam[]");
    }
  } catch (const json::exception& e) {
    throw Error(fmt::format("trainer state does not fit this run: {}", e.what()));
  } catch (const Error& e) {
    throw Error(fmt::format("trainer state does not fit this run: {}", e.what()));
  }
  return t;
}

}  // namespace recur::agent
