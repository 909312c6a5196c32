#include "agent/algorithm.h"

#include <spdlog/spdlog.h>

#include "agent/dist/communicator.h"
#include "agent/offpolicy/trainer.h"
#include "agent/ppo/trainer.h"
#include "core/error.h"
#include "envs/vector_env.h"

namespace recur::agent {

// device.actor / device.learner against this build and machine; auto is logged with its reason.
policy::Placement resolve_placement(const std::string& key, const std::string& value,
                                    const DeviceConfig& d, const policy::DeviceReport& report,
                                    const std::string& core) {
  std::string why;
  policy::Placement p;
  p.device = policy::resolve_device(key, value, report, &why);
  if (p.device == policy::Device::kCuda && value == "auto") {
    // A GPU is there, but not for this core in this role: auto means "the best that runs".
    const policy::CellType cell = policy::parse_cell_type(core);
    // Every cell has a CUDA step kernel and a GPU learner; the fused sequence kernels of the
    // minGRUs and lstm_ln (policy/cuda/cuda_sequence_executor.h) are taken when asked for by name,
    // not by `auto`. They passed their parity tests on an H200 on 2026-11-30; their column sums
    // (the bias and LayerNorm gradients) were rewritten after that run for speed, and `auto`
    // takes them once that version has passed on a device too.
    const bool runs =
        key != "device.learner" || (!policy::is_mingru(cell) && cell != policy::CellType::kLstmLn);
    if (!runs) {
      p.device = policy::Device::kCpu;
      why = fmt::format(
          "{}: auto -> cpu (policy.core = {}: the current version of its fused CUDA sequence "
          "kernels has not yet run on a GPU; set {}: cuda to use them)",
          key, core, key);
    }
  }
  if (!why.empty()) spdlog::info("{}", why);
  RECUR_CHECK(p.device == policy::Device::kCpu || d.index < static_cast<int>(report.gpus.size()),
              "device.index = {}: this machine has {} usable GPU(s) (0..{}); {} is cuda", d.index,
              report.gpus.size(), static_cast<int>(report.gpus.size()) - 1, key);
  p.step.device = p.sequence.device = d.index;
  p.step.use_graph = d.cuda_graph;
  p.step.io = policy::parse_step_io(d.actor_io);
  p.sequence.math = policy::parse_rnn_math(d.cudnn_math);
  p.sequence.algo = policy::parse_rnn_algo(d.cudnn_algo);
  p.sequence.data = policy::parse_rnn_data(d.cudnn_data);
  p.step.tower_streams = p.sequence.tower_streams = d.tower_streams;
  return p;
}

std::unique_ptr<envs::BatchEnv> make_batch_env(const TrainConfig& config,
                                               std::unique_ptr<envs::BatchEnv> env) {
  if (!env) {
    Options options;
    options.values = config.env.options;
    options.source = config.env.options_source.empty() ? "env.options" : config.env.options_source;
    env = std::make_unique<envs::VectorEnv>(config.env.id, config.env.num_envs, options,
                                            config.run.threads);
  }
  RECUR_CHECK(env->num_envs() == config.env.num_envs,
              "{}: the envs given hold {} envs, env.num_envs is {}; make them agree", env->id(),
              env->num_envs(), config.env.num_envs);
  return env;
}

policy::PolicySpec make_policy_spec(const PolicyConfig& c, const envs::Space& observation,
                                    const envs::Space& action) {
  RECUR_CHECK(!observation.is_discrete() && observation.shape().size() == 1,
              "observation space {} is not supported: recur's policies take a flat Box",
              observation.to_string());
  policy::PolicySpec s;
  s.obs_dim = observation.flat_size();
  if (action.is_discrete()) {
    s.action_kind = policy::ActionKind::kDiscrete;
    s.action_dim = static_cast<int>(action.n());
  } else {
    s.action_kind = policy::ActionKind::kContinuous;
    s.action_dim = action.flat_size();
  }
  s.encoder = c.encoder;
  s.head = c.head;
  s.activation = policy::parse_activation(c.activation);
  s.cell = policy::parse_cell_type(c.core);
  s.hidden = c.hidden;
  s.layers = c.layers;
  s.cell_clip = c.cell_clip;
  s.shared_core = c.shared_core;
  s.log_std_init = c.log_std_init;
  s.forget_bias = c.forget_bias;
  s.actor_gain = c.actor_gain;
  s.critic_gain = c.critic_gain;
  s.init = policy::parse_init_scheme(c.init);
  s.validate();
  return s;
}

std::unique_ptr<Algorithm> make_algorithm(const TrainConfig& config,
                                          std::unique_ptr<envs::BatchEnv> env,
                                          dist::Communicator* comm) {
  // algo.type is validated against this list (agent/config/validate.cc).
  if (config.algo.type == "ppo") return std::make_unique<PpoTrainer>(config, std::move(env), comm);
  if (config.algo.type == "sac" || config.algo.type == "td3") {
    RECUR_CHECK(comm == nullptr || comm->size() <= 1,
                "algo.type = {} runs in one process: start it without mpirun", config.algo.type);
    return std::make_unique<offpolicy::OffPolicyTrainer>(config, std::move(env));
  }
  throw Error(
      fmt::format("algo.type = {}: no such algorithm (known: ppo, sac, td3)", config.algo.type));
}

}  // namespace recur::agent
