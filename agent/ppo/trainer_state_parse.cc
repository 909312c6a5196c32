// Reading the resume state back (trainer_state.h); the writers are Trainer::save_state and the
// train job. nlohmann's get<T>() casts a float to an integer type without a range check (undefined
// behaviour for 1e300, found by tools/fuzz/trainer_state_fuzzer), so numbers go through the
// checked readers below; any other JSON exception becomes a recur::Error naming the file.
#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "agent/ppo/trainer_state.h"
#include "core/error.h"

namespace recur::agent {
namespace {
using nlohmann::json;

// An integer in [lo, hi]: JSON integers only (the writers never write 3.0 for a count).
int64_t integer(const json& j, const char* what, int64_t lo = std::numeric_limits<int64_t>::min(),
                int64_t hi = std::numeric_limits<int64_t>::max()) {
  RECUR_CHECK(j.is_number_integer(), "{} is {}, not an integer", what, j.dump());
  RECUR_CHECK(!j.is_number_unsigned() || j.get<uint64_t>() <= static_cast<uint64_t>(hi),
              "{} = {} is out of range", what, j.dump());
  const int64_t v = j.get<int64_t>();
  RECUR_CHECK(v >= lo && v <= hi, "{} = {} is out of range [{}, {}]", what, v, lo, hi);
  return v;
}
uint64_t unsigned64(const json& j, const char* what) {
  RECUR_CHECK(j.is_number_unsigned() || (j.is_number_integer() && j.get<int64_t>() >= 0),
              "{} is {}, not an unsigned integer", what, j.dump());
  return j.get<uint64_t>();
}
double real(const json& j, const char* what) {
  RECUR_CHECK(j.is_number(), "{} is {}, not a number", what, j.dump());
  return j.get<double>();
}
bool boolean(const json& j, const char* what) {
  RECUR_CHECK(j.is_boolean(), "{} is {}, not true or false", what, j.dump());
  return j.get<bool>();
}
const json& array(const json& j, const char* what) {
  RECUR_CHECK(j.is_array(), "{} is {}, not a list", what, j.dump());
  return j;
}

std::vector<double> reals(const json& j, const char* what) {
  std::vector<double> out;
  for (const json& x : array(j, what)) out.push_back(real(x, what));
  return out;
}
std::vector<float> floats(const json& j, const char* what) {
  std::vector<float> out;
  for (const json& x : array(j, what)) out.push_back(static_cast<float>(real(x, what)));
  return out;
}
std::vector<uint8_t> flags(const json& j, const char* what) {
  std::vector<uint8_t> out;
  for (const json& x : array(j, what)) out.push_back(static_cast<uint8_t>(integer(x, what, 0, 1)));
  return out;
}
Rng::State rng_from(const json& j, const char* what) {
  RECUR_CHECK(array(j, what).size() == 4, "{} holds {} values, not 4", what, j.size());
  Rng::State s{};
  for (size_t i = 0; i < 4; ++i) s[i] = unsigned64(j[i], what);
  return s;
}
}  // namespace

TrainerState parse_trainer_state(const std::string& text) {
  TrainerState t;
  try {
    const json j = json::parse(text);
    RECUR_CHECK(j.is_object() && j.contains("format") && j["format"] == "recur.trainer_state/1",
                "unknown trainer state format {}",
                j.is_object() ? j.value("format", json()).dump() : j.dump());
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
    if (!j.at("envs").is_null()) {
      t.envs.emplace();
      for (const json& e : array(j["envs"], "envs")) {
        envs::Env::Snapshot s;
        s.state = reals(e.at("state"), "envs[].state");
        s.rng = rng_from(e.at("rng"), "envs[].rng");
        s.seeded = boolean(e.at("seeded"), "envs[].seeded");
        s.has_reset = boolean(e.at("has_reset"), "envs[].has_reset");
        s.needs_reset = boolean(e.at("needs_reset"), "envs[].needs_reset");
        s.elapsed_steps =
            static_cast<int>(integer(e.at("elapsed_steps"), "envs[].elapsed_steps", 0, kMaxInt));
        s.episode_return = real(e.at("episode_return"), "envs[].episode_return");
        t.envs->push_back(std::move(s));
      }
      t.venv_episode_start = flags(j.at("venv_episode_start"), "venv_episode_start");
    }
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
    RECUR_CHECK(j.at("adam").is_object(), "adam is {}, not a map", j["adam"].dump());
    for (const auto& [name, v] : j["adam"].items()) t.adam[name] = floats(v, "adam[]");
  } catch (const json::exception& e) {
    throw Error(fmt::format("trainer state does not fit this run: {}", e.what()));
  } catch (const Error& e) {
    throw Error(fmt::format("trainer state does not fit this run: {}", e.what()));
  }
  return t;
}

ResumeState parse_resume_state(const std::string& text, const std::string& where) {
  const json state = json::parse(text, nullptr, false);
  RECUR_CHECK(!state.is_discarded() && state.is_object() && state.contains("trainer") &&
                  state.contains("job"),
              "{} is not a valid trainer state; start a new run", where);
  ResumeState r;
  try {
    RECUR_CHECK(state["trainer"].is_string(), "trainer is {}, not a string",
                state["trainer"].dump());
    r.trainer_states.push_back(state["trainer"].get<std::string>());
    if (state.contains("ranks")) {
      for (const json& s : array(state["ranks"], "ranks")) {
        RECUR_CHECK(s.is_string(), "ranks[] is {}, not a string", s.dump());
        r.trainer_states.push_back(s.get<std::string>());
      }
    }
    const json& job = state["job"];
    JobState& o = r.job;
    o.env_steps = integer(job.at("env_steps"), "job.env_steps", 0);
    for (const json& x : array(job.at("returns"), "job.returns"))
      o.returns.push_back(real(x, "job.returns"));
    for (const json& x : array(job.at("lengths"), "job.lengths"))
      o.lengths.push_back(
          static_cast<int>(integer(x, "job.lengths", 0, std::numeric_limits<int>::max())));
    o.episodes = integer(job.at("episodes"), "job.episodes", 0);
    o.progress_rows = integer(job.at("progress_rows"), "job.progress_rows", 0);
    o.eval_rows = integer(job.at("eval_rows"), "job.eval_rows", 0);
    o.next_eval = integer(job.at("next_eval"), "job.next_eval", -1);
    o.next_ckpt = integer(job.at("next_ckpt"), "job.next_ckpt", -1);
    if (!job.at("best").is_null()) o.best = real(job["best"], "job.best");
    o.elapsed = real(job.at("elapsed"), "job.elapsed");
  } catch (const json::exception& e) {
    throw Error(
        fmt::format("{} is not a valid trainer state ({}); start a new run", where, e.what()));
  } catch (const Error& e) {
    throw Error(
        fmt::format("{} is not a valid trainer state ({}); start a new run", where, e.what()));
  }
  return r;
}

}  // namespace recur::agent
