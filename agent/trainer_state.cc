// Trainer::save_state / restore_state: the resume state of a run as JSON.
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "agent/dist/communicator.h"
#include "agent/trainer.h"
#include "core/error.h"

namespace recur::agent {
namespace {
using nlohmann::json;

json rng_json(const Rng::State& s) {
  return json::array({s[0], s[1], s[2], s[3]});
}
Rng::State rng_from(const json& j) {
  Rng::State s{};
  for (size_t i = 0; i < 4; ++i) s[i] = j.at(i).get<uint64_t>();
  return s;
}
template <typename V>
json array(const V& v) {
  json a = json::array();
  for (const auto& x : v) a.push_back(x);
  return a;
}
template <typename T>
std::vector<T> vec(const json& j) {
  return j.get<std::vector<T>>();
}
}  // namespace

std::string Trainer::save_state() const {
  json j;
  RECUR_ASSERT(!pending_);  // async: settle() first, the pending rollout is not saved
  j["format"] = "recur.trainer_state/1";
  j["env_steps"] = env_steps();
  // A data-parallel run: env_steps counts every rank's steps, local_env_steps this rank's.
  j["local_env_steps"] = loop_->env_steps();
  j["rank"] = comm_ ? comm_->rank() : 0;
  j["world_size"] = comm_ ? comm_->size() : 1;
  j["policy_version"] = learner_version_;
  if (venv_->can_snapshot()) {
    const auto snap = venv_->snapshot();
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
    j["venv_episode_start"] = array(snap.episode_start);
  } else {
    j["envs"] = nullptr;  // envs outside recur (Python): they restart on resume
    j["venv_episode_start"] = nullptr;
  }
  std::vector<float> states(static_cast<size_t>(config_.env.num_envs) * spec_.state_size());
  actor_->get_states(states);
  j["recurrent_states"] = array(states);
  const auto& norm = actor_->normalizer();
  j["obs_norm"] = {
      {"mean", array(norm.mean())}, {"var", array(norm.var())}, {"count", norm.count()}};
  const auto& rn = loop_->reward_normalizer();
  j["reward_norm"] = {{"running_return", rn.running_return},
                      {"mean", rn.mean},
                      {"var", rn.var},
                      {"count", rn.count}};
  j["loop"] = {{"rng", rng_json(loop_->rng().state())},
               {"next_episode_start", array(loop_->next_episode_start())},
               {"started", loop_->started()}};
  j["ppo"] = {{"rng", rng_json(ppo_->rng().state())},
              {"nonfinite_streak", ppo_->consecutive_nonfinite()}};
  json adam = json::object();
  for (const auto& [name, t] : ppo_->engine().optimizer_tensors()) adam[name] = t.data;
  j["adam"] = adam;
  return j.dump();
}

void Trainer::restore_state(const std::string& text, const policy::TensorMap& tensors) {
  json j;
  try {
    j = json::parse(text);
    RECUR_CHECK(j.at("format") == "recur.trainer_state/1", "unknown trainer state format {}",
                j.at("format").dump());
    const int world = comm_ ? comm_->size() : 1, rank = comm_ ? comm_->rank() : 0;
    RECUR_CHECK(j.value("world_size", 1) == world && j.value("rank", 0) == rank,
                "it was saved by rank {} of a {}-rank run, and this is rank {} of {}: resume "
                "with the same number of ranks (mpirun -np {})",
                j.value("rank", 0), j.value("world_size", 1), rank, world,
                j.value("world_size", 1));
    ppo_->engine().load(tensors);
    actor_->load(tensors);
    int restarted = 0;
    if (j.at("envs").is_null() || !venv_->can_snapshot()) {
      // Envs that cannot be snapshotted (or were not): every episode starts anew, from reset
      // seeds that differ from the run's first ones.
      venv_->reset(derive_seed(config_.run.seed, j.at("env_steps").get<uint64_t>()));
      restarted = venv_->num_envs();
    } else {
      envs::BatchEnv::Snapshot snap;
      for (const auto& e : j.at("envs")) {
        envs::Env::Snapshot s;
        s.state = vec<double>(e.at("state"));
        s.rng = rng_from(e.at("rng"));
        s.seeded = e.at("seeded");
        s.has_reset = e.at("has_reset");
        s.needs_reset = e.at("needs_reset");
        s.elapsed_steps = e.at("elapsed_steps");
        s.episode_return = e.at("episode_return");
        snap.envs.push_back(std::move(s));
      }
      snap.episode_start = vec<uint8_t>(j.at("venv_episode_start"));
      restarted = venv_->restore(snap);
    }
    actor_->set_states(vec<float>(j.at("recurrent_states")));
    const auto& on = j.at("obs_norm");
    actor_->normalizer().set_statistics(vec<double>(on.at("mean")), vec<double>(on.at("var")),
                                        on.at("count").get<double>());
    auto& rn = loop_->reward_normalizer();
    const auto& rj = j.at("reward_norm");
    rn.running_return = vec<double>(rj.at("running_return"));
    rn.mean = rj.at("mean");
    rn.var = rj.at("var");
    rn.count = rj.at("count");
    loop_->rng().set_state(rng_from(j.at("loop").at("rng")));
    auto starts = vec<uint8_t>(j.at("loop").at("next_episode_start"));
    if (restarted > 0) {
      // Envs without a flat state (Box2D) begin new episodes on resume: their recurrent state
      // slots restart with them, and the cut episodes are not logged.
      for (size_t i = 0; i < starts.size(); ++i) starts[i] |= venv_->episode_start()[i];
      spdlog::warn(
          "{}: {} of {} in-flight episodes cannot be rebuilt from a checkpoint (Box2D world "
          "state, or envs from Python); they start anew on resume, so this run is not "
          "bit-identical to an unbroken one",
          config_.env.id, restarted, config_.env.num_envs);
    }
    loop_->restore_flags(starts, j.at("loop").at("started"));
    loop_->set_env_steps(j.value("local_env_steps", j.at("env_steps").get<int64_t>()));
    global_env_steps_ = j.at("env_steps");
    agree_on_current_statistics();
    // Absent in states written before the async mode existed.
    learner_version_ = actor_version_ = j.value("policy_version", int64_t{0});
    ppo_->rng().set_state(rng_from(j.at("ppo").at("rng")));
    ppo_->set_consecutive_nonfinite(j.at("ppo").at("nonfinite_streak"));
    policy::TensorMap adam;
    for (const auto& [name, v] : j.at("adam").items()) {
      auto data = vec<float>(v);
      adam[name] = policy::Tensor({static_cast<int64_t>(data.size())}, std::move(data));
    }
    ppo_->engine().load_optimizer_tensors(adam);
  } catch (const json::exception& e) {
    throw Error(fmt::format("trainer state does not fit this run: {}", e.what()));
  }
}

}  // namespace recur::agent
