#include "tools/cli/bench/bench_devices.h"

#include <algorithm>
#include <memory>
#include <numeric>

#include "agent/ppo/engine.h"
#include "core/rng.h"
#include "policy/devices.h"
#include "policy/gpu_executors.h"
#include "policy/policy_actor.h"
#include "policy/policy_spec.h"
#include "tools/cli/bench/bench_timing.h"

#ifdef RECUR_WITH_CUDA
#include <deque>

#include "kernels/cuda_memory.h"
#include "policy/cuda/cuda_policy_actor.h"
#include "policy/stage_marker.h"
#endif

namespace recur::cli {
namespace {

// The benchmark's policy: an MLP encoder and one LSTM layer per tower (separate actor and critic
// cores, recur's default), 4 discrete actions.
policy::PolicySpec bench_spec(int obs_dim, int hidden) {
  policy::PolicySpec s;
  s.obs_dim = obs_dim;
  s.action_kind = policy::ActionKind::kDiscrete;
  s.action_dim = 4;
  s.encoder = {64};
  s.hidden = hidden;
  s.layers = 1;
  // The training default (agent/config/config.h). PolicySpec's own default is a shared core, which
  // the rows measured until 2026-11-23 although this header already said "separate".
  s.shared_core = false;
  s.validate();
  return s;
}

double time_actor(const policy::PolicySpec& spec, int B, const policy::Placement& placement,
                  const policy::TensorMap& params, double min_seconds) {
  policy::PolicyActor actor(spec, B, placement);
  actor.load(params);
  Rng rng(7);
  const std::vector<float> obs = random_vec(static_cast<size_t>(B) * spec.obs_dim, rng);
  std::vector<uint8_t> starts(static_cast<size_t>(B), 0);
  std::vector<float> actions(static_cast<size_t>(B)), logp(actions.size()), values(actions.size());
  return time_per_call(min_seconds,
                       [&] { actor.act(obs, starts, rng, false, actions, logp, values); });
}

// One PPO minibatch update (compute + apply) of an engine over a rollout of T steps of B envs
// with plausible values and episode starts at `start_rate` per step (default 2%), so the cuDNN
// plan cuts sequences as in training; 0 gives B whole sequences, the bare cuDNN rows' shape.
// Built in place: the engine keeps a pointer to the rollout from begin_update on.
class LearnerBench {
 public:
  LearnerBench(const policy::PolicySpec& spec, int T, int B, bool cuda,
               const policy::Placement& placement, const policy::TensorMap& params,
               double start_rate)
      : engine_(cuda ? agent::make_cuda_ppo_engine(spec, placement, 1e-5f)
                     : agent::make_host_ppo_engine(spec, placement, 1e-5f)),
        envs_(static_cast<size_t>(B)) {
    engine_->load(params);
    Rng rng(11);
    r_.resize(T, B, spec.obs_dim, 1, spec.state_size());
    for (auto& v : r_.obs) v = static_cast<float>(rng.uniform(-1, 1));
    for (auto& v : r_.actions) v = static_cast<float>(rng.uniform_int(4));
    for (auto& v : r_.log_probs) v = static_cast<float>(-1.4 + rng.uniform(-0.2, 0.2));
    for (auto* a : {&r_.values, &r_.advantages, &r_.returns, &r_.initial_state})
      for (auto& v : *a) v = static_cast<float>(rng.uniform(-1, 1));
    for (auto& s : r_.episode_start) s = rng.uniform() < start_rate ? 1 : 0;
    engine_->begin_update(r_);
    std::iota(envs_.begin(), envs_.end(), 0);
  }
  LearnerBench(const LearnerBench&) = delete;
  LearnerBench& operator=(const LearnerBench&) = delete;

  agent::PpoEngine& engine() { return *engine_; }
  void update() {
    const agent::MinibatchResult m = engine_->compute(envs_, loss_, true);
    engine_->apply(m.grad_norm, 0.5, 3e-4);
  }
  // `count` minibatches as the trainer runs them: an engine that defers its steps (the CUDA
  // engine) enqueues them all and synchronizes once, as in an update's epochs; others update
  // one by one.
  void updates(int count) {
    if (!engine_->defers_steps()) {
      for (int i = 0; i < count; ++i) update();
      return;
    }
    engine_->begin_steps(count, 0.5, 3e-4, true);
    for (int i = 0; i < count; ++i) engine_->step(envs_, loss_, true);
    engine_->end_steps();
  }

 private:
  agent::Rollout r_;
  std::unique_ptr<agent::PpoEngine> engine_;
  std::vector<int> envs_;
  kernels::PpoLossConfig loss_;
};

double time_learner(const policy::PolicySpec& spec, int T, int B, bool cuda,
                    const policy::Placement& placement, const policy::TensorMap& params,
                    double start_rate, double min_seconds) {
  // 16 minibatches per timed call: one update of 4 epochs x 4 minibatches.
  constexpr int kMinibatches = 16;
  LearnerBench bench(spec, T, B, cuda, placement, params, start_rate);
  return time_per_call(min_seconds, [&] { bench.updates(kMinibatches); }) / kMinibatches;
}

#ifdef RECUR_WITH_CUDA
// Records a CUDA event at every mark; after each call, adds the time between consecutive marks
// to its stage's total. Events are created on first use and reused (a deque never moves them).
class EventClock final : public policy::StageMarker {
 public:
  void mark(const char* stage, CUstream_st* stream) override {
    if (stage == kStart) used_ = 0;
    if (used_ == events_.size()) events_.emplace_back();
    if (used_ == names_.size()) names_.emplace_back();
    events_[used_].record(stream);
    names_[used_] = stage;
    ++used_;
  }
  // After a call: waits for its last event and accumulates its stages.
  void collect() {
    RECUR_CHECK(used_ >= 2 && names_[0] == kStart, "stage clock: a call marked no stages");
    events_[used_ - 1].synchronize();
    for (size_t i = 1; i < used_; ++i) {
      const double us = 1e3 * events_[i].ms_since(events_[i - 1]);
      auto it = std::find_if(totals_.begin(), totals_.end(),
                             [&](const auto& t) { return t.first == names_[i]; });
      if (it == totals_.end()) it = totals_.insert(totals_.end(), {names_[i], 0.0});
      it->second += us;
    }
    ++calls_;
    used_ = 0;
  }
  std::vector<std::pair<std::string, double>> means() const {
    auto out = totals_;
    for (auto& t : out) t.second /= static_cast<double>(calls_);
    return out;
  }

 private:
  std::deque<kernels::CudaEvent> events_;
  std::vector<const char*> names_;
  size_t used_ = 0;
  std::vector<std::pair<std::string, double>> totals_;  // enqueue order
  int calls_ = 0;
};

constexpr int kStageWarmup = 3, kStageCalls = 20;

std::vector<std::pair<std::string, double>> actor_stages(const policy::PolicySpec& spec, int B,
                                                         policy::Placement placement,
                                                         const policy::TensorMap& params) {
  placement.step.use_graph = false;
  policy::PolicyActor actor(spec, B, placement);
  actor.load(params);
  EventClock clock;
  Rng rng(7);
  const std::vector<float> obs = random_vec(static_cast<size_t>(B) * spec.obs_dim, rng);
  std::vector<uint8_t> starts(static_cast<size_t>(B), 0);
  std::vector<float> actions(static_cast<size_t>(B)), logp(actions.size()), values(actions.size());
  for (int i = 0; i < kStageWarmup; ++i) actor.act(obs, starts, rng, false, actions, logp, values);
  actor.cuda_actor()->set_stage_marker(&clock);
  for (int i = 0; i < kStageCalls; ++i) {
    actor.act(obs, starts, rng, false, actions, logp, values);
    clock.collect();
  }
  actor.cuda_actor()->set_stage_marker(nullptr);
  return clock.means();
}

std::vector<std::pair<std::string, double>> learner_stages(const policy::PolicySpec& spec, int T,
                                                           int B,
                                                           const policy::Placement& placement,
                                                           const policy::TensorMap& params,
                                                           double start_rate) {
  LearnerBench bench(spec, T, B, /*cuda=*/true, placement, params, start_rate);
  EventClock clock;
  for (int i = 0; i < kStageWarmup + kStageCalls; ++i) {
    if (i == kStageWarmup) bench.engine().set_stage_marker(&clock);
    bench.update();
    if (i >= kStageWarmup) clock.collect();
  }
  bench.engine().set_stage_marker(nullptr);
  return clock.means();
}
#endif

}  // namespace

std::vector<DeviceBenchRow> bench_devices(const DeviceBenchConfig& config, std::string* note,
                                          [[maybe_unused]] std::vector<DeviceStageRow>* stages) {
  const policy::DeviceReport report = policy::query_devices();
  const bool gpu = config.gpu && report.cuda_usable();
  if (note)
    *note = !config.gpu            ? "GPU rows skipped (--no-gpu)"
            : report.cuda_usable() ? ""
                                   : "no GPU rows: " + report.gpu_unavailable;
  policy::Placement cpu, cuda;
  cuda.device = policy::Device::kCuda;
  cuda.step.device = cuda.sequence.device = config.device;
  cuda.sequence.algo = policy::parse_rnn_algo(config.cudnn_algo);
  policy::Placement mapped = cuda;  // the zero-copy actor I/O (kernels/mapped_io.h)
  mapped.step.io = policy::StepIo::kMapped;
  std::vector<DeviceBenchRow> rows;
  for (int H : config.hidden) {
    const policy::PolicySpec spec = bench_spec(config.obs_dim, H);
    Rng init(1);
    const policy::TensorMap params = policy::init_policy(spec, init);
    for (int B : config.envs) {
      for (bool on_gpu : {false, true}) {
        if (on_gpu && !gpu) continue;
        const double s = time_actor(spec, B, on_gpu ? cuda : cpu, params, config.min_seconds);
        rows.push_back({"actor", on_gpu ? "cuda" : "cpu", B, H, 1, 1e6 * s, B / s});
      }
      if (gpu) {
        const double s = time_actor(spec, B, mapped, params, config.min_seconds);
        rows.push_back({"actor", "cuda-mapped", B, H, 1, 1e6 * s, B / s});
      }
#ifdef RECUR_WITH_CUDA
      if (gpu && config.stages && stages)
        stages->push_back({"actor", B, H, 1, actor_stages(spec, B, cuda, params)});
#endif
    }
    for (int B : config.learner_envs) {
      const int T = config.seq_len;
      for (bool on_gpu : {false, true}) {
        if (on_gpu && !gpu) continue;
        const double s = time_learner(spec, T, B, on_gpu, on_gpu ? cuda : cpu, params,
                                      config.start_rate, config.min_seconds);
        rows.push_back(
            {"learner", on_gpu ? "cuda" : "cpu", B, H, T, 1e6 * s, static_cast<double>(T) * B / s});
      }
#ifdef RECUR_WITH_CUDA
      if (gpu && config.stages && stages)
        stages->push_back(
            {"learner", B, H, T, learner_stages(spec, T, B, cuda, params, config.start_rate)});
#endif
    }
  }
  return rows;
}

}  // namespace recur::cli
