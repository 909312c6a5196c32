#include "agent/algorithm.h"

#include "agent/ppo/trainer.h"
#include "core/error.h"

namespace recur::agent {

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
  s.validate();
  return s;
}

std::unique_ptr<Algorithm> make_algorithm(const TrainConfig& config,
                                          std::unique_ptr<envs::BatchEnv> env,
                                          dist::Communicator* comm) {
  // algo.type is validated against this list (agent/config/validate.cc).
  if (config.algo.type == "ppo") return std::make_unique<PpoTrainer>(config, std::move(env), comm);
  throw Error(fmt::format("algo.type = {}: no such algorithm (known: ppo)", config.algo.type));
}

}  // namespace recur::agent
