#include "tools/bench_devices.h"

#include <numeric>

#include "agent/ppo_engine.h"
#include "core/rng.h"
#include "policy/devices.h"
#include "policy/policy_actor.h"
#include "policy/policy_spec.h"
#include "tools/bench_timing.h"

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
  // The training default (agent/config.h). PolicySpec's own default is a shared core, which
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

double time_learner(const policy::PolicySpec& spec, int T, int B, bool cuda,
                    const policy::Placement& placement, const policy::TensorMap& params,
                    double min_seconds) {
  auto engine = cuda ? agent::make_cuda_ppo_engine(spec, placement, 1e-5f)
                     : agent::make_host_ppo_engine(spec, placement, 1e-5f);
  engine->load(params);
  Rng rng(11);
  agent::Rollout r;
  r.resize(T, B, spec.obs_dim, 1, spec.state_size());
  for (auto& v : r.obs) v = static_cast<float>(rng.uniform(-1, 1));
  for (auto& v : r.actions) v = static_cast<float>(rng.uniform_int(4));
  for (auto& v : r.log_probs) v = static_cast<float>(-1.4 + rng.uniform(-0.2, 0.2));
  for (auto* a : {&r.values, &r.advantages, &r.returns, &r.initial_state})
    for (auto& v : *a) v = static_cast<float>(rng.uniform(-1, 1));
  for (auto& s : r.episode_start) s = rng.uniform() < 0.02 ? 1 : 0;
  engine->begin_update(r);
  std::vector<int> envs(static_cast<size_t>(B));
  std::iota(envs.begin(), envs.end(), 0);
  const kernels::PpoLossConfig loss;
  return time_per_call(min_seconds, [&] {
    const agent::MinibatchResult m = engine->compute(envs, loss, true);
    engine->apply(m.grad_norm, 0.5, 3e-4);
  });
}

}  // namespace

std::vector<DeviceBenchRow> bench_devices(const DeviceBenchConfig& config, std::string* note) {
  const policy::DeviceReport report = policy::query_devices();
  const bool gpu = config.gpu && report.cuda_usable();
  if (note)
    *note = !config.gpu            ? "GPU rows skipped (--no-gpu)"
            : report.cuda_usable() ? ""
                                   : "no GPU rows: " + report.gpu_unavailable;
  policy::Placement cpu, cuda;
  cuda.device = policy::Device::kCuda;
  cuda.step.device = cuda.sequence.device = config.device;
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
    }
    for (int B : config.learner_envs) {
      const int T = config.seq_len;
      for (bool on_gpu : {false, true}) {
        if (on_gpu && !gpu) continue;
        const double s =
            time_learner(spec, T, B, on_gpu, on_gpu ? cuda : cpu, params, config.min_seconds);
        rows.push_back(
            {"learner", on_gpu ? "cuda" : "cpu", B, H, T, 1e6 * s, static_cast<double>(T) * B / s});
      }
    }
  }
  return rows;
}

}  // namespace recur::cli
