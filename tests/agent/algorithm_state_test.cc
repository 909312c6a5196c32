// The job's side of Algorithm::save_state's tensors (agent/algorithm.h), the path a replay buffer
// takes: PPO wrapped so that its state also holds a tensor (the number of iterations it ran) runs
// as a job, is interrupted, and resumes: the tensor comes back with the value it had at the
// checkpoint, the resume file names its file, and no generation's file outlives the two a resume
// can pick from.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "agent/algorithm.h"
#include "agent/config/yaml.h"
#include "agent/ppo/trainer.h"
#include "agent/run/resume_state.h"
#include "agent/train_job.h"
#include "tests/support/temp_dir.h"

using namespace recur;

namespace {

// What the algorithm saw, kept outside it (the job owns and ends the algorithm).
struct Record {
  float calls = 0;
  float restored = -1;
};

class CountingPpo final : public agent::Algorithm {
 public:
  CountingPpo(const agent::TrainConfig& c, std::unique_ptr<envs::BatchEnv> env,
              agent::dist::Communicator* comm, Record& record)
      : record_(record), ppo_(c, std::move(env), comm) {}

  const policy::PolicySpec& spec() const override { return ppo_.spec(); }
  policy::TensorMap policy_tensors() const override { return ppo_.policy_tensors(); }
  policy::Device actor_device() const override { return ppo_.actor_device(); }
  policy::Device learner_device() const override { return ppo_.learner_device(); }
  int64_t env_steps() const override { return ppo_.env_steps(); }
  bool done() const override { return ppo_.done(); }
  const std::vector<agent::MetricColumn>& metric_columns() const override {
    return ppo_.metric_columns();
  }
  agent::Iteration iterate(const std::function<void(const agent::EpisodeEnd&)>& f) override {
    ++record_.calls;
    return ppo_.iterate(f);
  }
  agent::AlgorithmState save_state() const override {
    agent::AlgorithmState s = ppo_.save_state();
    s.tensors["calls"] = policy::Tensor({1}, {record_.calls});
    return s;
  }
  void restore_state(const agent::AlgorithmState& s, const policy::TensorMap& t) override {
    record_.calls = s.tensors.at("calls").data.at(0);
    record_.restored = record_.calls;
    agent::AlgorithmState own = s;  // PPO's own tensors (its recurrent states and Adam's)
    own.tensors.erase("calls");
    ppo_.restore_state(own, t);
  }

 private:
  Record& record_;
  agent::PpoTrainer ppo_;
};

// The tensor files in checkpoints/, and those the resume file names (current and previous).
std::vector<std::string> state_files(const std::filesystem::path& run) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(run / "checkpoints"))
    if (e.path().filename().string().starts_with("algorithm_state-"))
      names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> named_files(const std::filesystem::path& run) {
  std::ifstream in(run / "trainer_state.safetensors");
  std::stringstream text;
  text << in.rdbuf();
  const auto file = agent::parse_resume_file(text.str(), "test");
  std::vector<std::string> names = {file.current.trainer_tensors};
  if (file.previous && file.previous->trainer_tensors != names[0])
    names.push_back(file.previous->trainer_tensors);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("job: an algorithm's state tensors are saved beside the checkpoint and restored") {
  const test::TempDir dir("algorithm_state_test");
  agent::TrainConfig c;
  c.env.id = "CartPole-v1";
  c.env.num_envs = 4;
  c.policy.encoder = {8};
  c.policy.hidden = 8;
  c.algo.rollout_steps = 16;
  c.algo.epochs = 1;
  c.algo.num_minibatches = 1;
  c.run.total_env_steps = 1024;
  c.run.eval_every = 256;
  c.run.eval_episodes = 1;
  c.run.final_eval_episodes = 1;
  c.run.output_dir = dir.path.string();

  Record first;
  agent::TrainJobOptions o;
  o.name = "counting";
  o.stop_at_env_steps = 512;  // 8 updates of 64 steps, evaluations (and saves) at 256 and 512
  o.make_algorithm = [&](const agent::TrainConfig& cfg, std::unique_ptr<envs::BatchEnv> env,
                         agent::dist::Communicator* comm) {
    return std::make_unique<CountingPpo>(cfg, std::move(env), comm, first);
  };
  const auto r1 = agent::run_train_job(c, agent::to_yaml(c), o);
  REQUIRE(r1.interrupted);
  REQUIRE(r1.env_steps == 512);
  CHECK(first.calls == 8);
  // The resume file names the latest generation's file, and no other file is left.
  CHECK(named_files(r1.run_dir).front() == "algorithm_state-512.safetensors");
  CHECK(state_files(r1.run_dir) == named_files(r1.run_dir));

  Record second;
  agent::TrainJobOptions resume;
  resume.resume_dir = r1.run_dir;
  resume.make_algorithm = [&](const agent::TrainConfig& cfg, std::unique_ptr<envs::BatchEnv> env,
                              agent::dist::Communicator* comm) {
    return std::make_unique<CountingPpo>(cfg, std::move(env), comm, second);
  };
  const auto r2 = agent::run_train_job(c, agent::to_yaml(c), resume);
  CHECK(second.restored == 8);  // the value at the checkpoint, read back from its file
  CHECK(second.calls == 16);    // 8 more updates to 1024
  CHECK(r2.env_steps == 1024);
  // Evaluations at 768 and 1024 and the final one saved again: two generations named, two files.
  const auto named = named_files(r2.run_dir);
  CHECK(named.size() == 2);
  CHECK(state_files(r2.run_dir) == named);
}
