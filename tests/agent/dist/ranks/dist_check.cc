// Multi-rank checks of data-parallel training (agent/dist/), run by ctest under
// `mpirun -np 2 dist_check MODE` (tests/agent/dist/ranks/CMakeLists.txt). Each rank prints what it
// checks; the exit status is 0 on every rank only when every check passed (a failing rank exits 1,
// and mpirun reports the job as failed).
//
//   identical [async]  K updates of a 2-rank Trainer (observation and reward normalization on,
//                      2 minibatches): every rank ends with bit-identical policy tensors,
//                      optimizer moments and normalizer statistics; the statistics count every
//                      rank's observations exactly once; env steps count every rank's.
//   parity             the gradient averaging against one process: each rank collects N envs
//                      (the envs rank*N.. of the run), its distributed PpoUpdater updates on
//                      them, and rank 0 also updates a one-process PpoUpdater on the union of both
//                      ranks' rollouts (2N envs). With one minibatch per epoch (so both see the
//                      same minibatches: all envs) and per-minibatch advantage normalization off
//                      (it would normalize over N envs on a rank and 2N in one process), the two
//                      must give the same weights up to float rounding after every update.
//   preempt            dist.sync_frac 0.5 with a slow rank 1: its rollouts are cut short (never
//                      below a quarter), the ranks still hold bit-identical weights, and the
//                      statistics count what was collected.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "agent/actor_loop.h"
#include "agent/config/config.h"
#include "agent/dist/communicator.h"
#include "agent/dist/rank_checks.h"
#include "agent/ppo/trainer.h"
#include "agent/ppo/updater.h"
#include "envs/vector_env.h"
#include "policy/policy_actor.h"
#include "policy/policy_spec.h"

using namespace recur;
namespace dist = recur::agent::dist;

namespace {

int failures = 0;
void expect(bool ok, int rank, const std::string& what) {
  std::printf("rank %d: %s %s\n", rank, ok ? "PASS" : "FAIL", what.c_str());
  std::fflush(stdout);
  if (!ok) ++failures;
}

// Whether every rank holds the same text (all_gather, compare with rank 0).
bool same_everywhere(dist::Communicator& comm, const std::string& mine) {
  const auto all = comm.all_gather(mine, "the test's comparison");
  for (const auto& s : all)
    if (s != all[0]) return false;
  return true;
}

agent::TrainConfig small_config(bool async) {
  agent::TrainConfig c;
  c.env.id = "CartPoleNoVel-v1";
  c.env.num_envs = 4;
  c.env.normalize_obs = true;
  c.env.normalize_reward = true;
  c.policy.encoder = {};
  c.policy.hidden = 16;
  c.algo.rollout_steps = 16;
  c.algo.epochs = 2;
  c.algo.num_minibatches = 2;
  c.algo.async = async;
  c.run.total_env_steps = 1 << 20;
  return c;
}

int identical(dist::Communicator& comm, bool async) {
  const int rank = comm.rank(), world = comm.size();
  const agent::TrainConfig c = small_config(async);
  agent::PpoTrainer trainer(c, nullptr, &comm);
  const std::string start = dist::fingerprint(trainer.policy_tensors());
  expect(same_everywhere(comm, start), rank, "the same initial weights on every rank");
  constexpr int kUpdates = 5;
  for (int k = 0; k < kUpdates; ++k) trainer.iterate({});
  if (trainer.pending()) trainer.settle();
  const std::string after = dist::fingerprint(trainer.policy_tensors());
  expect(after != start, rank, "the weights changed");
  expect(same_everywhere(comm, after), rank,
         "bit-identical weights and normalizer statistics on every rank after the updates");
  const auto state = nlohmann::json::parse(trainer.save_state().json);
  expect(same_everywhere(comm, state.at("adam").dump()), rank,
         "bit-identical Adam moments and step count on every rank");
  expect(same_everywhere(comm, state.at("reward_norm").at("var").dump()), rank,
         "the same reward statistics on every rank");
  const int64_t per_rank = int64_t{c.algo.rollout_steps} * c.env.num_envs;
  const int64_t collected = trainer.env_steps();
  expect(collected % (per_rank * world) == 0 && collected >= per_rank * world * kUpdates, rank,
         "env steps count every rank's (" + std::to_string(collected) + ")");
  // Every observation of every rank counted once, on top of the prior's 1e-4.
  const double count = state.at("obs_norm").at("count").get<double>();
  expect(std::abs(count - 1e-4 - static_cast<double>(collected)) < 1e-6, rank,
         "the observation statistics count every rank's observations once (" +
             std::to_string(count) + ")");
  // Different envs on different ranks: their recurrent states differ.
  expect(!same_everywhere(comm, state.at("recurrent_states").dump()), rank,
         "each rank steps its own envs");
  return failures;
}

// Rank 1's envs take 300 us more per step: a straggler for DD-PPO's preemption.
class SlowEnv final : public envs::BatchEnv {
 public:
  explicit SlowEnv(std::unique_ptr<envs::BatchEnv> inner) : inner_(std::move(inner)) {}
  int num_envs() const override { return inner_->num_envs(); }
  const envs::Space& single_observation_space() const override {
    return inner_->single_observation_space();
  }
  const envs::Space& single_action_space() const override { return inner_->single_action_space(); }
  const std::string& id() const override { return inner_->id(); }
  void reset(uint64_t seed) override { inner_->reset(seed); }
  void step(std::span<const float> actions) override {
    std::this_thread::sleep_for(std::chrono::microseconds(300));
    inner_->step(actions);
  }
  std::span<const float> obs() const override { return inner_->obs(); }
  std::span<const float> rewards() const override { return inner_->rewards(); }
  std::span<const uint8_t> terminated() const override { return inner_->terminated(); }
  std::span<const uint8_t> truncated() const override { return inner_->truncated(); }
  std::span<const uint8_t> episode_start() const override { return inner_->episode_start(); }
  std::span<const float> final_obs() const override { return inner_->final_obs(); }
  std::span<const double> final_return() const override { return inner_->final_return(); }
  std::span<const int> final_length() const override { return inner_->final_length(); }

 private:
  std::unique_ptr<envs::BatchEnv> inner_;
};

int preempt(dist::Communicator& comm) {
  const int rank = comm.rank(), world = comm.size();
  agent::TrainConfig c = small_config(false);
  c.dist.sync_frac = 0.5f;  // of 2 ranks: stop once the other has finished
  std::unique_ptr<envs::BatchEnv> env;
  if (rank == 1)
    env = std::make_unique<SlowEnv>(std::make_unique<envs::VectorEnv>(c.env.id, c.env.num_envs));
  agent::PpoTrainer trainer(c, std::move(env), &comm);
  constexpr int kUpdates = 6;
  for (int k = 0; k < kUpdates; ++k) trainer.iterate({});
  const int64_t full = int64_t{kUpdates} * c.algo.rollout_steps * c.env.num_envs * world;
  const int64_t collected = trainer.env_steps();
  expect(collected < full && collected >= full * 5 / 8, rank,
         "the straggler's rollouts were cut short, never below a quarter (" +
             std::to_string(collected) + " of " + std::to_string(full) + " env steps)");
  expect(same_everywhere(comm, dist::fingerprint(trainer.policy_tensors())), rank,
         "bit-identical weights and normalizer statistics with rollouts of unequal length");
  const auto state = nlohmann::json::parse(trainer.save_state().json);
  const double count = state.at("obs_norm").at("count").get<double>();
  expect(std::abs(count - 1e-4 - static_cast<double>(collected)) < 1e-6, rank,
         "the observation statistics count every collected observation once");
  return failures;
}

// rollouts of every rank, in rank order, concatenated along the env axis.
agent::Rollout gather_rollouts(dist::Communicator& comm, const agent::Rollout& mine) {
  std::string bytes;
  const auto put = [&](const auto& v) {
    bytes.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(v[0]));
  };
  put(mine.obs), put(mine.actions), put(mine.log_probs), put(mine.values), put(mine.rewards);
  put(mine.terminated), put(mine.truncated), put(mine.episode_start);
  put(mine.bootstrap_values), put(mine.initial_state), put(mine.last_values);
  const auto all = comm.all_gather(bytes, "the test's rollouts");
  const int R = comm.size(), N = mine.N, T = mine.T;
  agent::Rollout out;
  out.resize(T, N * R, mine.obs_dim, mine.action_dim, mine.state_size);
  for (int r = 0; r < R; ++r) {
    size_t at = 0;
    // (T, N, w) of rank r -> (T, R*N, w) columns r*N..; (N, w) -> rows r*N...
    const auto take = [&](auto& dst, int width, bool time_major) {
      using V = std::remove_reference_t<decltype(dst[0])>;
      const int rows = time_major ? T : 1;
      for (int t = 0; t < rows; ++t)
        for (int n = 0; n < N; ++n) {
          const size_t to = (static_cast<size_t>(t) * N * R + static_cast<size_t>(r) * N + n) *
                            static_cast<size_t>(width);
          std::memcpy(&dst[to], all[static_cast<size_t>(r)].data() + at, sizeof(V) * width);
          at += sizeof(V) * static_cast<size_t>(width);
        }
    };
    take(out.obs, mine.obs_dim, true), take(out.actions, mine.action_dim, true);
    take(out.log_probs, 1, true), take(out.values, 1, true), take(out.rewards, 1, true);
    take(out.terminated, 1, true), take(out.truncated, 1, true);
    take(out.episode_start, 1, true), take(out.bootstrap_values, 1, true);
    take(out.initial_state, mine.state_size, false), take(out.last_values, 1, false);
  }
  return out;
}

int parity(dist::Communicator& comm) {
  const int rank = comm.rank();
  agent::TrainConfig c = small_config(false);
  c.env.normalize_obs = false;
  c.env.normalize_reward = false;
  c.algo.num_minibatches = 1;
  c.algo.epochs = 3;
  c.algo.normalize_advantage = false;
  c.algo.lr_schedule = "constant";
  const int N = c.env.num_envs;
  envs::VectorEnv venv(c.env.id, N);
  venv.reset(c.run.seed, rank * N);
  const auto spec = agent::make_policy_spec(c.policy, venv.single_observation_space(),
                                            venv.single_action_space());
  Rng init(derive_seed(c.run.seed, 0x1417));
  const auto params = policy::init_policy(spec, init);
  policy::PolicyActor actor(spec, N);
  actor.load(params);
  agent::ActorLoop loop(venv, actor, derive_seed(c.run.seed, 77 + rank), false);
  policy::Placement cpu;
  agent::PpoUpdater distributed(c.algo, agent::make_host_ppo_engine(spec, cpu, c.algo.adam_eps),
                                c.run.seed, &comm);
  distributed.engine().load(params);
  agent::PpoUpdater single(c.algo, agent::make_host_ppo_engine(spec, cpu, c.algo.adam_eps),
                           c.run.seed);
  single.engine().load(params);
  // The control: this rank's envs alone, no averaging. It must differ, or the check above could
  // not tell averaging from its absence.
  agent::PpoUpdater alone(c.algo, agent::make_host_ppo_engine(spec, cpu, c.algo.adam_eps),
                          c.run.seed);
  alone.engine().load(params);
  double worst = 0, control = 0;
  for (int k = 0; k < 4; ++k) {
    agent::Rollout mine;
    loop.collect(c.algo.rollout_steps, mine, {});
    agent::Rollout all = gather_rollouts(comm, mine);
    agent::Rollout mine_copy = mine;
    distributed.update(mine, 0.0);
    single.update(all, 0.0);
    if (k == 0) {
      alone.engine().load(params);
      alone.update(mine_copy, 0.0);
      const auto a = distributed.engine().to_tensors(), b = alone.engine().to_tensors();
      for (const auto& [name, t] : a)
        for (size_t i = 0; i < t.data.size(); ++i)
          control =
              std::max(control, static_cast<double>(std::abs(t.data[i] - b.at(name).data[i])));
    }
    const auto a = distributed.engine().to_tensors(), b = single.engine().to_tensors();
    for (const auto& [name, t] : a)
      for (size_t i = 0; i < t.data.size(); ++i)
        worst = std::max(worst, static_cast<double>(std::abs(t.data[i] - b.at(name).data[i])));
    actor.load_weights(a);
  }
  char figures[160];
  std::snprintf(figures, sizeof figures, "max |dw| %.3g; one rank's envs alone: %.3g", worst,
                control);
  expect(worst < 2e-5, rank,
         "2 ranks x " + std::to_string(N) + " envs match 1 process x " + std::to_string(2 * N) +
             " envs after 4 updates (" + figures + ")");
  expect(control > 1e-4, rank, "without averaging the weights differ (the check can fail)");
  return failures;
}

// Not a test: the cost of one gradient all-reduce of `floats` floats on these ranks (median of
// 200 after 20 warm-up calls), for docs/PERFORMANCE.md's scaling model.
int bench(dist::Communicator& comm, size_t floats) {
  std::vector<float> buffer(floats, 1.0f);
  std::vector<double> seconds;
  for (int i = 0; i < 220; ++i) {
    comm.barrier("bench");
    const auto t0 = std::chrono::steady_clock::now();
    comm.all_reduce_mean(buffer, "bench");
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  seconds.erase(seconds.begin(), seconds.begin() + 20);
  std::sort(seconds.begin(), seconds.end());
  if (comm.rank() == 0)
    std::printf("all-reduce of %zu floats (%.0f KB) over %d ranks: median %.1f us, min %.1f us\n",
                floats, static_cast<double>(floats) * 4 / 1000, comm.size(),
                seconds[seconds.size() / 2] * 1e6, seconds.front() * 1e6);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  agent::DistConfig config;
  config.backend = "mpi";
  config.timeout_s = 120;
  auto comm = dist::make_communicator(config);
  int local = 0;
  if (mode == "identical")
    local = identical(*comm, argc > 2 && std::string(argv[2]) == "async");
  else if (mode == "parity")
    local = parity(*comm);
  else if (mode == "preempt")
    local = preempt(*comm);
  else if (mode == "bench")
    local = bench(*comm, argc > 2 ? std::stoul(argv[2]) : 46539);
  else {
    std::fprintf(
        stderr,
        "usage: mpirun -np 2 dist_check identical [async] | parity | preempt | bench [FLOATS]\n");
    return 2;
  }
  std::array<int64_t, 1> any = {local};
  comm->all_reduce_max(any, "the test's verdict");
  return any[0] == 0 ? 0 : 1;
}
