// The small CartPole-v1 training job that the run tests (train_job_test, background_eval_test,
// target_confirm_test, recorder_test's video case) build on; each changes what it tests from there.
#pragma once

#include <string>

#include "agent/config/config.h"

namespace recur::test {

// 4 envs, an MLP-16 encoder before an LSTM-16, 16-step rollouts in 2 minibatches for 2 epochs,
// 2048 env steps with an evaluation of 2 episodes every 1024 and a final one of 3; its run
// directory under `dir`. A few seconds of a test.
inline agent::TrainConfig small_cartpole_job(const std::string& dir) {
  agent::TrainConfig c;
  c.env.id = "CartPole-v1";
  c.env.num_envs = 4;
  c.policy.encoder = {16};
  c.policy.hidden = 16;
  c.algo.rollout_steps = 16;
  c.algo.epochs = 2;
  c.algo.num_minibatches = 2;
  c.run.total_env_steps = 2048;
  c.run.eval_every = 1024;
  c.run.eval_episodes = 2;
  c.run.final_eval_episodes = 3;
  c.run.output_dir = dir;
  return c;
}

}  // namespace recur::test
