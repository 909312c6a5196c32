// The CUDA PPO engine (agent/ppo/cuda_engine.cc) against the host engine on the same
// rollout and weights: one minibatch's loss terms and every parameter's gradient (relative
// <= 1e-4 per tensor: fp32 cuDNN with FMA math, cuBLAS and the CPU's Eigen sum in different
// orders over T * B = 96 samples and 2-layer cores; the loss sums are double on both sides),
// the Adam step that follows, optimizer state exchanged between the two engines, the
// device-to-device publish to a GPU actor (bitwise the same as publishing canonical tensors),
// and a GPU-trained policy evaluated on the CPU and vice versa. Skipped without a usable GPU.
#include <doctest/doctest.h>

#ifdef RECUR_WITH_CUDA

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "agent/evaluator.h"
#include "agent/ppo/engine.h"
#include "agent/ppo/trainer.h"
#include "agent/ppo/updater.h"
#include "core/rng.h"
#include "policy/policy_actor.h"
#include "policy/policy_spec.h"
#include "tests/support/gpu_skip.h"
#include "tests/support/rel_err.h"

using namespace recur;

namespace {

policy::PolicySpec spec_for(policy::ActionKind kind, bool shared, policy::CellType cell) {
  policy::PolicySpec s;
  s.obs_dim = 5;
  s.action_kind = kind;
  s.action_dim = kind == policy::ActionKind::kDiscrete ? 3 : 2;
  s.encoder = {16};
  s.cell = cell;
  s.hidden = 24;
  s.layers = 2;
  s.shared_core = shared;
  s.actor_gain = 1.0f;
  s.log_std_init = -0.3f;
  return s;
}

// A rollout with everything the update reads filled in (GAE outputs included), resets inside
// the sequences and non-zero initial states.
agent::Rollout random_rollout(const policy::PolicySpec& spec, int T, int N, Rng& rng) {
  agent::Rollout r;
  const int adim = spec.action_kind == policy::ActionKind::kDiscrete ? 1 : spec.action_dim;
  r.resize(T, N, spec.obs_dim, adim, spec.state_size());
  for (auto& v : r.obs) v = static_cast<float>(rng.uniform(-1.5, 1.5));
  for (auto& v : r.actions)
    v = spec.action_kind == policy::ActionKind::kDiscrete
            ? static_cast<float>(rng.uniform_int(static_cast<uint64_t>(spec.action_dim)))
            : static_cast<float>(rng.uniform(-1, 1));
  // Old log-probs near the policy's so that ratios fall on both sides of the clip range.
  for (auto& v : r.log_probs)
    v = static_cast<float>((spec.action_kind == policy::ActionKind::kDiscrete ? -1.1 : -2.0) +
                           rng.uniform(-0.4, 0.4));
  for (auto& v : r.values) v = static_cast<float>(rng.uniform(-0.5, 0.5));
  for (auto& v : r.advantages) v = static_cast<float>(rng.uniform(-1, 1));
  for (auto& v : r.returns) v = static_cast<float>(rng.uniform(-1, 1));
  for (auto& v : r.initial_state) v = static_cast<float>(rng.uniform(-0.5, 0.5));
  for (size_t i = 0; i < r.episode_start.size(); ++i)
    r.episode_start[i] = rng.uniform() < 0.1 ? 1 : 0;
  return r;
}

using recur::test::rel_err;

double rel(double a, double b) {
  return std::abs(a - b) / std::max(std::abs(b), 1e-12);
}

policy::Placement cuda_placement() {
  policy::Placement p;
  p.device = policy::Device::kCuda;
  return p;
}

}  // namespace

TEST_CASE("CUDA PPO engine gives the host engine's loss and gradients and Adam step") {
  if (!test::gpu_or_skip("CUDA PPO engine vs host engine")) return;
  using policy::ActionKind;
  using policy::CellType;
  for (ActionKind kind : {ActionKind::kDiscrete, ActionKind::kContinuous})
    for (bool shared : {true, false})
      for (CellType cell : {CellType::kLstm, CellType::kGru})
        for (double clip_vf : {0.0, 0.2}) {
          CAPTURE(static_cast<int>(kind));
          CAPTURE(shared);
          CAPTURE(static_cast<int>(cell));
          CAPTURE(clip_vf);
          const policy::PolicySpec spec = spec_for(kind, shared, cell);
          Rng rng(17);
          const policy::TensorMap params = policy::init_policy(spec, rng);
          auto host = agent::make_host_ppo_engine(spec, policy::Placement{}, 1e-5f);
          auto gpu = agent::make_cuda_ppo_engine(spec, cuda_placement(), 1e-5f);
          host->load(params);
          gpu->load(params);
          // The loaded weights read back bit for bit (canonical -> opaque / flat -> canonical).
          CHECK(gpu->to_tensors() == host->to_tensors());

          const agent::Rollout r = random_rollout(spec, 12, 10, rng);
          const std::vector<int> envs = {7, 2, 9, 0, 4, 5, 1, 8};  // B = 8 of N = 10
          kernels::PpoLossConfig loss;
          loss.clip_range = 0.2;
          loss.clip_range_vf = clip_vf;
          loss.vf_coef = 0.5;
          loss.ent_coef = 0.01;
          host->begin_update(r);
          gpu->begin_update(r);
          const agent::MinibatchResult h = host->compute(envs, loss, true);
          const agent::MinibatchResult g = gpu->compute(envs, loss, true);
          CHECK(rel(g.policy_loss, h.policy_loss) < 1e-4);
          CHECK(rel(g.value_loss, h.value_loss) < 1e-4);
          CHECK(rel(g.entropy, h.entropy) < 1e-4);
          CHECK(rel(g.grad_norm, h.grad_norm) < 1e-4);
          CHECK(std::abs(g.approx_kl - h.approx_kl) < 1e-5);
          // A ratio within float rounding of 1 +- clip could count on one side only.
          CHECK(std::abs(g.clip_fraction - h.clip_fraction) <= 1.0 / 96 + 1e-12);
          const auto hg = host->gradient_tensors();
          const auto gg = gpu->gradient_tensors();
          REQUIRE(hg.size() == gg.size());
          for (const auto& [name, t] : hg) {
            CAPTURE(name);
            REQUIRE(gg.count(name) == 1);
            CHECK(rel_err(gg.at(name).data, t.data) < 1e-4);
          }

          // One clipped Adam step from the same state: both move every weight by at most lr per
          // step (Adam's first step is ~lr * sign(g)), and by the same amount up to the few
          // weights whose gradient is near zero (there the step's size is g / (|g| + eps)).
          const double lr = 1e-3;
          const auto before = host->to_tensors();
          host->apply(h.grad_norm, 0.5, lr);
          gpu->apply(g.grad_norm, 0.5, lr);
          const auto ha = host->to_tensors();
          const auto ga = gpu->to_tensors();
          for (const auto& [name, t] : ha) {
            CAPTURE(name);
            const auto& w0 = before.at(name).data;
            const auto& wg = ga.at(name).data;
            std::vector<float> dh(w0.size()), dg(w0.size());
            double max_diff = 0;
            for (size_t i = 0; i < w0.size(); ++i) {
              dh[i] = t.data[i] - w0[i];
              dg[i] = wg[i] - w0[i];
              max_diff = std::max(max_diff, std::abs(double{wg[i]} - t.data[i]));
            }
            CHECK(max_diff <= 2 * lr * 1.001);
            CHECK(rel_err(dg, dh) < 1e-2);
          }
        }
}

TEST_CASE("CUDA PPO engine optimizer state is the host engine's format") {
  if (!test::gpu_or_skip("CUDA PPO engine optimizer state")) return;
  const policy::PolicySpec spec =
      spec_for(policy::ActionKind::kContinuous, false, policy::CellType::kGru);
  Rng rng(3);
  const policy::TensorMap params = policy::init_policy(spec, rng);
  auto gpu = agent::make_cuda_ppo_engine(spec, cuda_placement(), 1e-5f);
  gpu->load(params);
  const agent::Rollout r = random_rollout(spec, 8, 4, rng);
  gpu->begin_update(r);
  const std::vector<int> envs = {0, 1, 2, 3};
  for (int i = 0; i < 3; ++i) {
    const auto res = gpu->compute(envs, kernels::PpoLossConfig{}, true);
    gpu->apply(res.grad_norm, 0.5, 3e-4);
  }
  const policy::TensorMap state = gpu->optimizer_tensors();
  CHECK(state.at("optim.adam.step").data[0] == 3.0f);
  // The GPU's moments (cuDNN's opaque order inside) load into the host engine (canonical order
  // there) and back, unchanged: a run resumes on either device.
  auto host = agent::make_host_ppo_engine(spec, policy::Placement{}, 1e-5f);
  host->load_optimizer_tensors(state);
  CHECK(host->optimizer_tensors() == state);
  auto gpu2 = agent::make_cuda_ppo_engine(spec, cuda_placement(), 1e-5f);
  gpu2->load_optimizer_tensors(host->optimizer_tensors());
  CHECK(gpu2->optimizer_tensors() == state);
}

TEST_CASE("CUDA PPO engine publishes to a GPU actor as canonical tensors would") {
  if (!test::gpu_or_skip("CUDA PPO engine device publish")) return;
  for (bool shared : {true, false}) {
    CAPTURE(shared);
    const policy::PolicySpec spec =
        spec_for(policy::ActionKind::kDiscrete, shared, policy::CellType::kLstm);
    Rng rng(5);
    auto gpu = agent::make_cuda_ppo_engine(spec, cuda_placement(), 1e-5f);
    gpu->load(policy::init_policy(spec, rng));
    const agent::Rollout r = random_rollout(spec, 8, 4, rng);
    gpu->begin_update(r);
    const auto res = gpu->compute(std::vector<int>{0, 1, 2, 3}, kernels::PpoLossConfig{}, true);
    gpu->apply(res.grad_norm, 0.5, 1e-2);  // weights now differ from the initial ones

    const int B = 6;
    policy::PolicyActor direct(spec, B, cuda_placement());
    policy::PolicyActor canonical(spec, B, cuda_placement());
    policy::PolicyActor cpu(spec, B);
    policy::PolicyActor grouped(spec, B, cuda_placement(), 2);  // env.groups 2: two GPU actors
    gpu->publish(direct);                                       // device to device
    gpu->publish(grouped);                                      // device to device, to each group
    canonical.load_weights(gpu->to_tensors());                  // through canonical tensors
    gpu->publish(cpu);                                          // a CPU actor: canonical tensors
    std::vector<float> obs(static_cast<size_t>(B) * spec.obs_dim);
    std::vector<uint8_t> starts(B, 0);
    std::vector<float> a1(B), l1(B), v1(B), a2(B), l2(B), v2(B), a3(B), l3(B), v3(B);
    std::vector<float> a4(B), l4(B), v4(B);
    Rng r1(1), r2(1), r3(1), r4(1);
    for (int step = 0; step < 5; ++step) {
      for (auto& o : obs) o = static_cast<float>(rng.uniform(-1, 1));
      std::fill(starts.begin(), starts.end(), step == 0 ? 1 : 0);
      direct.act(obs, starts, r1, true, a1, l1, v1);
      canonical.act(obs, starts, r2, true, a2, l2, v2);
      cpu.act(obs, starts, r3, true, a3, l3, v3);
      grouped.act(obs, starts, r4, true, a4, l4, v4);
      CHECK(a1 == a2);
      CHECK(a1 == a4);
      CHECK(rel_err(l4, l1) < 1e-5);  // GEMMs of 3 rows, not 6: equal up to rounding
      CHECK(rel_err(v4, v1) < 1e-5);
      CHECK(l1 == l2);
      CHECK(v1 == v2);
      CHECK(rel_err(l1, l3) < 1e-5);
      CHECK(rel_err(v1, v3) < 1e-5);
    }
  }
}

TEST_CASE("a policy trained on the GPU evaluates on the CPU and vice versa") {
  if (!test::gpu_or_skip("cross-device evaluation")) return;
  for (const char* train_device : {"cuda", "cpu"}) {
    CAPTURE(train_device);
    agent::TrainConfig c;
    c.env.id = "CartPole-v1";
    c.env.num_envs = 4;
    c.policy.hidden = 16;
    c.algo.rollout_steps = 32;
    c.run.total_env_steps = 1024;
    c.device.actor = train_device;
    c.device.learner = train_device;
    agent::PpoTrainer trainer(c);
    while (!trainer.done()) trainer.iterate(nullptr);
    const policy::TensorMap tensors = trainer.policy_tensors();
    agent::EvalConfig e;
    e.env_id = "CartPole-v1";
    e.episodes = 4;
    e.num_envs = 2;
    agent::EvalConfig e_gpu = e;
    e_gpu.placement = cuda_placement();
    const agent::EvalResult on_cpu = agent::evaluate_policy(trainer.spec(), tensors, e);
    const agent::EvalResult on_gpu = agent::evaluate_policy(trainer.spec(), tensors, e_gpu);
    REQUIRE(on_cpu.returns.size() == 4);
    REQUIRE(on_gpu.returns.size() == 4);
    // Same weights, deterministic actions: the episodes agree unless float rounding flips a
    // near-tie between the two actions somewhere; returns stay close either way.
    MESSAGE(train_device << "-trained: CPU eval " << on_cpu.mean_return() << ", GPU eval "
                         << on_gpu.mean_return());
    CHECK(std::abs(on_cpu.mean_return() - on_gpu.mean_return()) <=
          0.25 * std::max(on_cpu.mean_return(), on_gpu.mean_return()) + 5.0);
  }
}

// The deferred steps (engine.h; compute, step guard and Adam enqueued per minibatch, results read
// once per update or per epoch) against the per-minibatch flow on the same engine type: the same
// weights, Adam state and statistics bit for bit (same kernels in the same order, only the reads
// move), through finite updates, a non-finite minibatch skipped, a stop on one (same message, no
// step after it) and the target-KL stop.
namespace {
struct GpuOutcome {
  agent::UpdateStats stats;
  std::string error;
  policy::TensorMap weights, optimizer;
};

GpuOutcome run_updates(const policy::PolicySpec& spec, const agent::AlgoConfig& cfg, bool deferred,
                       const std::vector<agent::Rollout>& rollouts) {
  Rng init(21);
  auto engine = agent::make_cuda_ppo_engine(spec, cuda_placement(), cfg.adam_eps);
  engine->load(policy::init_policy(spec, init));
  agent::PpoUpdater ppo(cfg, std::move(engine), 5);
  ppo.set_deferred_steps(deferred);
  GpuOutcome out;
  try {
    for (size_t i = 0; i < rollouts.size(); ++i) {
      agent::Rollout r = rollouts[i];
      out.stats = ppo.update(r, 0.1 * static_cast<double>(i), 1000 * static_cast<int64_t>(i + 1));
    }
  } catch (const agent::NonFiniteUpdate& e) {
    out.error = e.what();
  }
  out.weights = ppo.engine().to_tensors();
  out.optimizer = ppo.engine().optimizer_tensors();
  return out;
}
}  // namespace

TEST_CASE("CUDA PPO deferred steps equal per-minibatch reads bit for bit") {
  if (!test::gpu_or_skip("CUDA PPO deferred steps")) return;
  const policy::PolicySpec spec =
      spec_for(policy::ActionKind::kContinuous, false, policy::CellType::kGru);
  Rng rng(17);
  const agent::Rollout a = random_rollout(spec, 8, 8, rng), b = random_rollout(spec, 8, 8, rng);
  agent::Rollout bad = b;
  bad.rewards[5 * 8 + 3] = std::numeric_limits<float>::infinity();  // env 3's column
  agent::AlgoConfig cfg;
  cfg.epochs = 3;
  cfg.num_minibatches = 4;
  cfg.max_grad_norm = 0.05f;  // some steps clip
  struct Case {
    const char* name;
    const char* on_nonfinite;
    float target_kl;
    bool use_bad;
  };
  for (const Case c : {Case{"finite", "stop", 0.0f, false}, Case{"skip", "skip", 0.0f, true},
                       Case{"stop", "stop", 0.0f, true}, Case{"target_kl", "stop", 1e-6f, false}}) {
    CAPTURE(c.name);
    agent::AlgoConfig k = cfg;
    k.on_nonfinite = c.on_nonfinite;
    k.target_kl = c.target_kl;
    const std::vector<agent::Rollout> rollouts = {a, c.use_bad ? bad : b};
    const GpuOutcome d = run_updates(spec, k, true, rollouts);
    const GpuOutcome p = run_updates(spec, k, false, rollouts);
    CHECK(d.error == p.error);
    CHECK(d.weights == p.weights);
    CHECK(d.optimizer == p.optimizer);
    CHECK(d.stats.policy_loss == p.stats.policy_loss);
    CHECK(d.stats.value_loss == p.stats.value_loss);
    CHECK(d.stats.approx_kl == p.stats.approx_kl);
    CHECK(d.stats.grad_norm == p.stats.grad_norm);
    CHECK(d.stats.minibatches == p.stats.minibatches);
    CHECK(d.stats.skipped == p.stats.skipped);
    CHECK(d.stats.epochs_run == p.stats.epochs_run);
    if (std::string(c.name) == "skip") CHECK(d.stats.skipped == 3);
    if (std::string(c.name) == "stop") CHECK(d.error.find("non-finite") != std::string::npos);
  }
}

// The rollout math on the device (engine.h: GAE by kernels/gae.h, the async anchor by forward
// passes and kernels/proximal_anchor.h, one read back per update) against the updater's host
// flow on the same engine type. Without the anchor every kernel repeats the host's operations
// (GAE's reference is compute_gae bit for bit), so the weights agree to rounding of the same
// minibatches; the anchor's weight uses the device's expf, an ulp or two from the host's, so
// the advantages it scales agree to a relative 1e-6 and the weights to 1e-4 per tensor.
namespace {
struct MathOutcome {
  agent::UpdateStats stats;
  policy::TensorMap weights;
  std::vector<agent::Rollout> after;
};

MathOutcome run_math(const policy::PolicySpec& spec, const agent::AlgoConfig& cfg, bool on_device,
                     int policy_lag, const std::vector<agent::Rollout>& rollouts) {
  Rng init(23);
  auto engine = agent::make_cuda_ppo_engine(spec, cuda_placement(), cfg.adam_eps);
  engine->load(policy::init_policy(spec, init));
  agent::PpoUpdater ppo(cfg, std::move(engine), 5);
  ppo.set_engine_rollout_math(on_device);
  MathOutcome out;
  for (size_t i = 0; i < rollouts.size(); ++i) {
    out.after.push_back(rollouts[i]);
    out.stats = ppo.update(out.after.back(), 0.1 * static_cast<double>(i),
                           1000 * static_cast<int64_t>(i + 1), policy_lag);
  }
  out.weights = ppo.engine().to_tensors();
  return out;
}
}  // namespace

TEST_CASE("CUDA PPO engine's GAE and async anchor on the device equal the host flow") {
  if (!test::gpu_or_skip("CUDA PPO rollout math")) return;
  const policy::PolicySpec spec =
      spec_for(policy::ActionKind::kDiscrete, true, policy::CellType::kLstm);
  Rng rng(29);
  std::vector<agent::Rollout> rollouts;
  for (int k = 0; k < 2; ++k) {
    agent::Rollout r = random_rollout(spec, 8, 16, rng);
    for (auto& v : r.rewards) v = static_cast<float>(rng.uniform(-1, 1));
    for (auto& v : r.last_values) v = static_cast<float>(rng.uniform(-0.5, 0.5));
    for (size_t i = 0; i < r.terminated.size(); ++i) {
      const double u = rng.uniform();
      if (u < 0.06) r.terminated[i] = 1;
      if (u >= 0.06 && u < 0.1) {
        r.truncated[i] = 1;
        r.bootstrap_values[i] = static_cast<float>(rng.uniform(-0.5, 0.5));
      }
    }
    rollouts.push_back(std::move(r));
  }
  agent::AlgoConfig cfg;
  cfg.epochs = 2;
  cfg.num_minibatches = 4;
  // values: algo.async_anchor_values, the learner's critic values replacing the stored ones and
  // GAE run again on them (with lag 1; at lag 0 there is no anchor).
  for (const bool values : {false, true})
    for (const int lag : {0, 1}) {
      CAPTURE(values);
      CAPTURE(lag);
      cfg.async_anchor_values = values;
      const MathOutcome d = run_math(spec, cfg, true, lag, rollouts);
      const MathOutcome h = run_math(spec, cfg, false, lag, rollouts);
      const double tol = lag == 0 ? 1e-6 : 1e-4;
      for (const auto& [name, t] : h.weights) {
        CAPTURE(name);
        CHECK(rel_err(d.weights.at(name).data, t.data) <= tol);
      }
      const bool critic = values && lag == 1;
      for (size_t i = 0; i < rollouts.size(); ++i) {
        CAPTURE(i);
        const auto& a = d.after[i];
        const auto& b = h.after[i];
        // Returns read only the rollout, or with the critic's values the weights of the update's
        // start; the anchor's proximal log-probs come from those weights too: the same in both
        // flows for the first update (up to the device's rounding), a little apart after.
        const double later = i == 0 ? (critic ? 1e-5 : 1e-6) : 1e-4;
        CHECK(rel_err(a.returns, b.returns) <= (critic ? later : 1e-6));
        CHECK(rel_err(a.values, b.values) <= (critic ? later : 0.0));
        CHECK(rel_err(a.advantages, b.advantages) <= (lag == 0 ? 1e-6 : later));
        CHECK(rel_err(a.log_probs, b.log_probs) <= later);
        if (lag == 0) CHECK(a.log_probs == rollouts[i].log_probs);
        if (lag == 1) CHECK(a.log_probs != rollouts[i].log_probs);
        if (critic) CHECK(a.values != rollouts[i].values);
      }
      CHECK(std::abs(d.stats.explained_variance - h.stats.explained_variance) <= 1e-5);
      CHECK(d.stats.minibatches == h.stats.minibatches);
    }
}

// device.tower_streams 2 through whole updates (deferred steps, no host wait between minibatches;
// GAE and the async anchor on the device): the weights and statistics of one stream, bit for bit.
TEST_CASE("CUDA PPO engine's proximal log-probs and critic values equal the host engine's") {
  // algo.async_anchor_values reads the critic's values of the rollout's steps from log_probs().
  if (!test::gpu_or_skip("CUDA PPO log_probs with values")) return;
  for (const bool shared : {true, false}) {
    CAPTURE(shared);
    const policy::PolicySpec spec =
        spec_for(policy::ActionKind::kDiscrete, shared, policy::CellType::kLstm);
    Rng rng(31);
    const policy::TensorMap params = policy::init_policy(spec, rng);
    auto host = agent::make_host_ppo_engine(spec, policy::Placement{}, 1e-5f);
    auto gpu = agent::make_cuda_ppo_engine(spec, cuda_placement(), 1e-5f);
    host->load(params);
    gpu->load(params);
    const agent::Rollout r = random_rollout(spec, 9, 10, rng);
    host->begin_update(r);
    gpu->begin_update(r);
    const std::vector<int> envs = {7, 2, 9, 0, 4};
    std::vector<float> hl(9 * envs.size()), hv(hl.size()), gl(hl.size()), gv(hl.size());
    host->log_probs(envs, hl, hv);
    gpu->log_probs(envs, gl, gv);
    CHECK(rel_err(gl, hl) <= 1e-5);
    CHECK(rel_err(gv, hv) <= 1e-5);
    std::vector<float> only(hl.size());
    gpu->log_probs(envs, only, {});  // values not wanted: the same log-probs
    CHECK(only == gl);
  }
}

TEST_CASE("CUDA PPO updates with the critic's tower on its own stream equal one stream") {
  if (!test::gpu_or_skip("CUDA PPO tower streams")) return;
  const policy::PolicySpec spec =
      spec_for(policy::ActionKind::kContinuous, false, policy::CellType::kLstm);
  Rng rng(37);
  const std::vector<agent::Rollout> rollouts = {random_rollout(spec, 8, 16, rng),
                                                random_rollout(spec, 8, 16, rng)};
  agent::AlgoConfig cfg;
  cfg.epochs = 2;
  cfg.num_minibatches = 4;
  struct Run {
    policy::TensorMap weights, optimizer;
    agent::UpdateStats stats;
  } runs[2];
  for (int streams = 1; streams <= 2; ++streams) {
    policy::Placement placement = cuda_placement();
    placement.sequence.tower_streams = streams;
    Rng init(41);
    auto engine = agent::make_cuda_ppo_engine(spec, placement, cfg.adam_eps);
    engine->load(policy::init_policy(spec, init));
    agent::PpoUpdater ppo(cfg, std::move(engine), 5);
    for (size_t i = 0; i < rollouts.size(); ++i) {
      agent::Rollout r = rollouts[i];
      runs[streams - 1].stats = ppo.update(r, 0.1, 1000, static_cast<int>(i));  // lag 0, then 1
    }
    runs[streams - 1].weights = ppo.engine().to_tensors();
    runs[streams - 1].optimizer = ppo.engine().optimizer_tensors();
  }
  CHECK(runs[1].weights == runs[0].weights);
  CHECK(runs[1].optimizer == runs[0].optimizer);
  CHECK(runs[1].stats.policy_loss == runs[0].stats.policy_loss);
  CHECK(runs[1].stats.value_loss == runs[0].stats.value_loss);
  CHECK(runs[1].stats.grad_norm == runs[0].stats.grad_norm);
}

// parameters_finite() tests every parameter on the device (one double read back): a NaN or an
// infinity in any canonical tensor, loaded through the converter into the cores' opaque buffers
// and the MLPs' own, is found; the finite weights pass, and so do they after updates (the cores'
// layout gaps stay zero).
TEST_CASE("CUDA PPO engine's device parameter check finds a non-finite value in any tensor") {
  if (!test::gpu_or_skip("CUDA PPO parameter check")) return;
  const policy::PolicySpec spec =
      spec_for(policy::ActionKind::kContinuous, false, policy::CellType::kLstm);
  Rng init(31);
  const policy::TensorMap clean = policy::init_policy(spec, init);
  auto engine = agent::make_cuda_ppo_engine(spec, cuda_placement(), 1e-5f);
  engine->load(clean);
  CHECK(engine->parameters_finite());
  int tensors = 0;
  for (const auto& [name, t] : clean) {
    if (name.rfind("obs_norm.", 0) == 0) continue;
    CAPTURE(name);
    for (const float bad :
         {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::infinity()}) {
      policy::TensorMap w = clean;
      w.at(name).data[w.at(name).data.size() / 2] = bad;
      engine->load(w);
      CHECK_FALSE(engine->parameters_finite());
    }
    ++tensors;
  }
  CHECK(tensors >= 10);
  engine->load(clean);
  CHECK(engine->parameters_finite());
  // After real updates too.
  Rng rng(33);
  agent::AlgoConfig cfg;
  cfg.num_minibatches = 2;
  agent::PpoUpdater ppo(cfg, std::move(engine), 3);
  agent::Rollout r = random_rollout(spec, 8, 4, rng);
  ppo.update(r, 0.0, 100);
  CHECK(ppo.engine().parameters_finite());
}

#endif  // RECUR_WITH_CUDA
