// PpoTrainer::save_state / restore_state: the resume state of a run as JSON (read back by
// agent/ppo/trainer_state_parse.cc), with its bulky float arrays as tensors beside it.
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "agent/dist/communicator.h"
#include "agent/ppo/trainer.h"
#include "agent/ppo/trainer_state.h"
#include "agent/run/env_snapshot_json.h"
#include "core/error.h"

#include <algorithm>
#include <type_traits>

namespace recur::agent {
namespace {
using nlohmann::json;

template <typename V>
json array(const V& v) {
  json a = json::array();
  for (const auto& x : v) a.push_back(x);
  return a;
}
}  // namespace

void take_bulk_tensors(const policy::TensorMap& tensors, TrainerState& t) {
  const auto states = tensors.find(kRecurrentStates);
  RECUR_CHECK(states != tensors.end(),
              "trainer state does not fit this run: its format 2 keeps the recurrent states in "
              "the tensor file beside it, which has no tensor '{}'",
              kRecurrentStates);
  t.recurrent_states = states->second.data;
  t.adam.clear();
  for (const auto& [name, tensor] : tensors)
    if (name.starts_with("optim.")) t.adam[name] = tensor.data;
}

namespace {
// The pending rollout's arrays by tensor name (uint8 flags travel as float 0/1: exact).
template <typename R, typename F>  // R: Rollout or const Rollout
void for_each_rollout_array(R& r, F&& f) {
  f("pending.obs", r.obs);
  f("pending.actions", r.actions);
  f("pending.log_probs", r.log_probs);
  f("pending.values", r.values);
  f("pending.rewards", r.rewards);
  f("pending.bootstrap_values", r.bootstrap_values);
  f("pending.initial_state", r.initial_state);
  f("pending.last_values", r.last_values);
  f("pending.chunk_states", r.chunk_states);
  f("pending.terminated", r.terminated);
  f("pending.truncated", r.truncated);
  f("pending.episode_start", r.episode_start);
  f("pending.transition", r.transition);
}
}  // namespace

void PpoTrainer::save_pending(json& j, policy::TensorMap& tensors) const {
  const int slot = current_;
  const Rollout& r = rollouts_[slot];
  j["pending"] = {{"version", rollout_version_[slot]},
                  {"env_steps", rollout_env_steps_[slot]},
                  {"steps", r.T},
                  {"has_reset_steps", r.has_reset_steps}};
  for_each_rollout_array(r, [&](const char* name, const auto& v) {
    tensors[name] =
        policy::Tensor({static_cast<int64_t>(v.size())}, std::vector<float>(v.begin(), v.end()));
  });
}

void PpoTrainer::restore_pending(const TrainerState& t, const policy::TensorMap& tensors) {
  const TrainerState::Pending& p = *t.pending;
  RECUR_CHECK(p.steps == config_.algo.rollout_steps,
              "trainer state does not fit this run: its pending rollout has {} steps and "
              "algo.rollout_steps is {}: resume with algo.rollout_steps: {}",
              p.steps, config_.algo.rollout_steps, p.steps);
  Rollout& r = rollouts_[0];
  r.resize(p.steps, config_.env.num_envs, spec_.obs_dim, spec_.action_width(), spec_.state_size());
  for_each_rollout_array(r, [&](const char* name, auto& v) {
    const auto it = tensors.find(name);
    RECUR_CHECK(it != tensors.end() && it->second.data.size() == v.size(),
                "trainer state does not fit this run: the pending rollout's tensor '{}' is {} "
                "(expected {} values)",
                name,
                it == tensors.end() ? std::string("missing")
                                    : fmt::format("{} values", it->second.data.size()),
                v.size());
    using T = typename std::decay_t<decltype(v)>::value_type;
    std::transform(it->second.data.begin(), it->second.data.end(), v.begin(),
                   [](float x) { return static_cast<T>(x); });
  });
  r.has_reset_steps = p.has_reset_steps;
  current_ = 0;
  rollout_version_[0] = p.version;
  rollout_env_steps_[0] = p.env_steps;
  pending_ = true;
}

AlgorithmState PpoTrainer::save_state() const {
  json j;
  // The pending rollout is saved on one process; a data-parallel run settles first.
  RECUR_ASSERT(!pending_ || saves_pending());
  // Every env's recurrent state and Adam's moments are most of the state (1024 envs x LSTM-128:
  // 262,144 floats; ~10 MB as JSON text, written at every evaluation: ~0.1 s of training stalled
  // each time). They go to the job's tensor file in binary ("recur.trainer_state/2"), but in a
  // data-parallel run, whose ranks' states travel as text (format 1, arrays in the JSON).
  const bool bulk_in_tensors = comm_ == nullptr;
  AlgorithmState out;
  j["format"] = bulk_in_tensors ? "recur.trainer_state/2" : "recur.trainer_state/1";
  j["env_steps"] = env_steps();
  // A data-parallel run: env_steps counts every rank's steps, local_env_steps this rank's.
  j["local_env_steps"] = loop_->env_steps();
  j["rank"] = comm_ ? comm_->rank() : 0;
  j["world_size"] = comm_ ? comm_->size() : 1;
  j["policy_version"] = learner_version_;
  write_env_snapshot(*venv_, j);
  std::vector<float> states(static_cast<size_t>(config_.env.num_envs) * spec_.state_size());
  actor_->get_states(states);
  if (bulk_in_tensors)
    out.tensors[kRecurrentStates] = policy::Tensor(
        {config_.env.num_envs, static_cast<int64_t>(spec_.state_size())}, std::move(states));
  else
    j[kRecurrentStates] = array(states);
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
  if (pending_) save_pending(j, out.tensors);  // saves_pending(): format 2
  if (bulk_in_tensors) {
    out.tensors.merge(ppo_->engine().optimizer_tensors());  // "optim.adam.*": no clash
  } else {
    json adam = json::object();
    for (const auto& [name, t] : ppo_->engine().optimizer_tensors()) adam[name] = t.data;
    j["adam"] = adam;
  }
  out.json = j.dump();
  return out;
}

void PpoTrainer::restore_state(const AlgorithmState& state, const policy::TensorMap& tensors) {
  TrainerState t = parse_trainer_state(state.json);
  if (t.bulk_in_tensors) {
    take_bulk_tensors(state.tensors, t);
  } else {
    RECUR_CHECK(state.tensors.empty(),
                "trainer state does not fit this run: its format 1 keeps every array in the JSON, "
                "yet {} tensors came with it",
                state.tensors.size());
  }
  const int world = comm_ ? comm_->size() : 1, rank = comm_ ? comm_->rank() : 0;
  RECUR_CHECK(t.world_size == world && t.rank == rank,
              "trainer state does not fit this run: it was saved by rank {} of a {}-rank run, and "
              "this is rank {} of {}: resume with the same number of ranks (mpirun -np {})",
              t.rank, t.world_size, rank, world, t.world_size);
  const auto num_envs = static_cast<size_t>(config_.env.num_envs);
  RECUR_CHECK(t.next_episode_start.size() == num_envs,
              "trainer state does not fit this run: it holds {} episode-start flags for {} envs",
              t.next_episode_start.size(), num_envs);
  ppo_->engine().load(tensors);
  actor_->load(tensors);
  int restarted = 0;
  if (!t.envs || !venv_->can_snapshot()) {
    // Envs that cannot be snapshotted (or were not): every episode starts anew, from reset
    // seeds that differ from the run's first ones.
    venv_->reset(derive_seed(config_.run.seed, static_cast<uint64_t>(t.env_steps)));
    restarted = venv_->num_envs();
  } else {
    envs::BatchEnv::Snapshot snap;
    snap.envs = *t.envs;
    snap.episode_start = t.venv_episode_start;
    restarted = venv_->restore(snap);
  }
  actor_->set_states(t.recurrent_states);
  actor_->normalizer().set_statistics(t.obs_mean, t.obs_var, t.obs_count);
  auto& rn = loop_->reward_normalizer();
  rn.running_return = t.reward_running_return;
  rn.mean = t.reward_mean;
  rn.var = t.reward_var;
  rn.count = t.reward_count;
  loop_->rng().set_state(t.loop_rng);
  auto starts = t.next_episode_start;
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
  loop_->restore_flags(starts, t.loop_started);
  loop_->set_env_steps(t.local_env_steps);
  global_env_steps_ = t.env_steps;
  agree_on_current_statistics();
  learner_version_ = actor_version_ = t.policy_version;
  ppo_->rng().set_state(t.ppo_rng);
  ppo_->set_consecutive_nonfinite(t.nonfinite_streak);
  policy::TensorMap adam;
  for (const auto& [name, data] : t.adam)
    adam[name] = policy::Tensor({static_cast<int64_t>(data.size())}, data);
  ppo_->engine().load_optimizer_tensors(adam);
  if (t.pending) restore_pending(t, state.tensors);
}

}  // namespace recur::agent
