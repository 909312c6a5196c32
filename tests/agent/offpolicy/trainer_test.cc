// Recurrent SAC / TD3 as training jobs: the same seed gives the same progress.csv twice, and a
// run interrupted at a checkpoint and resumed (envs, recurrent states, replay buffer, networks,
// optimizers and random streams restored) writes the same rows as the unbroken run.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "agent/config/yaml.h"
#include "agent/train_job.h"
#include "tests/support/temp_dir.h"

using namespace recur;

namespace {

agent::TrainConfig small(const std::string& algo, const std::string& env, bool stored_state) {
  agent::TrainConfig c;
  c.env.id = env;
  c.env.num_envs = 2;
  c.env.normalize_obs = false;
  c.policy.encoder = {8};
  c.policy.head = {8};
  c.policy.hidden = 8;
  c.policy.activation = "relu";
  c.algo.type = algo;
  c.offpolicy.buffer_size = 2000;
  c.offpolicy.batch_size = 4;
  c.offpolicy.seq_len = 8;
  c.offpolicy.burn_in = stored_state ? 3 : 0;
  c.offpolicy.stored_state = stored_state;
  c.offpolicy.learning_starts = 100;
  c.offpolicy.updates_per_step = 0.5f;
  c.offpolicy.steps_per_iteration = 100;
  c.run.total_env_steps = 600;
  c.run.eval_every = 200;
  c.run.eval_episodes = 1;
  c.run.final_eval_episodes = 1;
  c.run.tensorboard = false;
  return c;
}

// progress.csv without its wall-clock columns.
std::vector<std::string> rows(const std::filesystem::path& run) {
  std::ifstream in(run / "progress.csv");
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header, out;
  {
    std::stringstream h(line);
    std::string cell;
    while (std::getline(h, cell, ',')) header.push_back(cell);
  }
  while (std::getline(in, line)) {
    std::stringstream r(line);
    std::string cell, kept;
    for (size_t k = 0; std::getline(r, cell, ','); ++k) {
      const std::string& name = k < header.size() ? header[k] : "";
      if (name == "time_s" || name == "fps" || name.ends_with("_time_s")) continue;
      kept += cell + ",";
    }
    out.push_back(kept);
  }
  return out;
}

std::filesystem::path run(const agent::TrainConfig& c, const std::string& name, int64_t stop_at = 0,
                          const std::filesystem::path& resume = {}) {
  agent::TrainJobOptions o;
  o.name = name;
  o.stop_at_env_steps = stop_at;
  o.resume_dir = resume;
  const auto r = agent::run_train_job(c, agent::to_yaml(c), o);
  return r.run_dir;
}

void check_repeatable_and_resumable(const agent::TrainConfig& base, const std::string& what) {
  const test::TempDir dir("offpolicy_trainer_test");
  agent::TrainConfig c = base;
  c.run.output_dir = dir.path.string();
  const auto a = rows(run(c, what + "_a"));
  const auto b = rows(run(c, what + "_b"));
  REQUIRE(a.size() == 6);
  CHECK(a == b);
  const auto cut = run(c, what + "_c", 400);
  const auto resumed = rows(run(c, what + "_c", 0, cut));
  CHECK(resumed == a);
}

}  // namespace

TEST_CASE("sac (Box): repeatable, and a resumed run equals the unbroken one") {
  check_repeatable_and_resumable(small("sac", "PendulumNoVel-v1", false), "sac");
}

TEST_CASE("td3 with stored states and burn-in: repeatable and resumable") {
  check_repeatable_and_resumable(small("td3", "PendulumNoVel-v1", true), "td3");
}

TEST_CASE("discrete sac: repeatable and resumable") {
  check_repeatable_and_resumable(small("sac", "CartPoleNoVel-v1", true), "sacd");
}
