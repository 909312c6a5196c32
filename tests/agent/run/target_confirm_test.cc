// run.target_confirm_episodes: an evaluation that reaches the target counts only once more
// episodes of the same weights reach it too (agent/train_job.cc, confirm_target). The time to
// target, confirm.csv, the resume of a confirmation pending beside training, and a confirmation
// that fails, forced by envs whose confirmation episodes pay nothing.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "agent/config/yaml.h"
#include "agent/run/resume_state.h"
#include "agent/run/run_dir.h"
#include "agent/train_job.h"
#include "envs/env.h"
#include "envs/vector_env.h"
#include "policy/policy_checkpoint.h"
#include "tests/support/temp_dir.h"
#include "tests/support/train_configs.h"

using namespace recur;

namespace {

agent::TrainConfig cartpole(const std::string& dir) {
  return test::small_cartpole_job(dir);
}

agent::TrainJobOptions named(const std::string& name) {
  agent::TrainJobOptions o;
  o.name = name;
  return o;
}

std::vector<std::vector<std::string>> csv_rows(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    rows.push_back(cells);
  }
  return rows;
}

std::string text_of(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const std::vector<std::string> kHeader = {"env_steps",  "eval_return_mean", "return_mean",
                                          "return_std", "length_mean",      "episodes",
                                          "confirmed"};

// One-step episodes that pay `pay`: what any policy scores is known in advance.
class Payout final : public envs::Env {
 public:
  explicit Payout(double pay)
      : Env(envs::Space::box(-1.0f, 1.0f, {1}), envs::Space::discrete(2)), pay_(pay) {}

 protected:
  void reset_impl(Rng&, std::optional<uint64_t>) override {}
  Outcome step_impl(std::span<const float>) override { return {pay_, true}; }
  void observe(std::span<float> obs) const override { obs[0] = 0; }

 private:
  double pay_;
};

// Envs given from outside: training and evaluation envs pay 1, and so do the confirmation's when
// `confirmation_pays`; else they pay 0. The evaluation asks for run.eval_episodes (2) envs, the
// confirmation for min(run.target_confirm_episodes, 8) = 8.
agent::TrainJobOptions payout_envs(const std::string& name,
                                   std::function<double()> confirmation_pay);

agent::TrainJobOptions payout_envs(const std::string& name, bool confirmation_pays) {
  return payout_envs(name, [confirmation_pays] { return confirmation_pays ? 1.0 : 0.0; });
}

// The same with each confirmation's pay drawn from `confirmation_pay` when its envs are made.
agent::TrainJobOptions payout_envs(const std::string& name,
                                   std::function<double()> confirmation_pay) {
  agent::TrainJobOptions o = named(name);
  o.make_env = [confirmation_pay](int n, bool training) -> std::unique_ptr<envs::BatchEnv> {
    const double pay = training || n != 8 ? 1.0 : confirmation_pay();
    std::vector<std::unique_ptr<envs::Env>> envs;
    for (int i = 0; i < n; ++i) envs.push_back(std::make_unique<Payout>(pay));
    return std::make_unique<envs::VectorEnv>(std::move(envs));
  };
  o.env_source = "test";
  return o;
}

}  // namespace

TEST_CASE(
    "an evaluation at the target counts once more episodes of its weights reach it: "
    "confirm.csv, and a resume runs a pending confirmation again") {
  const recur::test::TempDir tmp("target_confirm_test");
  auto c = cartpole(tmp.path.string());
  // Every CartPole episode lasts more than 5 steps: the first evaluation and its confirmation
  // reach this target whatever the weights.
  c.run.target_return = 5.0f;
  c.run.target_confirm_episodes = 20;
  const auto go_on = agent::run_train_job(c, agent::to_yaml(c), named("go_on"));
  REQUIRE(go_on.target_env_steps);
  CHECK(*go_on.target_env_steps == 1024);
  const auto eval = csv_rows(go_on.run_dir / "eval.csv");
  const auto confirm = csv_rows(go_on.run_dir / "confirm.csv");
  REQUIRE(eval.size() == 3);     // header, 1024, the final one
  REQUIRE(confirm.size() == 2);  // header, 1024: none once the target is reached
  CHECK(confirm[0] == kHeader);
  REQUIRE(confirm[1].size() == kHeader.size());
  CHECK(confirm[1][0] == "1024");
  CHECK(confirm[1][1] == eval[1][1]);  // the evaluation's mean, as eval.csv has it
  CHECK(std::stod(confirm[1][2]) >= 5.0);
  CHECK(confirm[1][5] == "20");
  CHECK(confirm[1][6] == "1");
  // The weights that reached it are kept: the run trained past them to 2048.
  const auto target = policy::load_policy(go_on.run_dir / "checkpoints" / "target.safetensors");
  CHECK(target.metadata.at(agent::kMetaEnvSteps) == "1024");
  CHECK(policy::load_policy(go_on.run_dir / "checkpoints" / "latest.safetensors")
            .metadata.at(agent::kMetaEnvSteps) == "2048");

  // A process killed with the evaluation at 1024 and its confirmation pending beside training
  // left the save made when they started (stopping at 1024 waits for them and saves again: make
  // the generation before the current one, as such a process would have left it). The resume
  // drops the confirm.csv row written after that save and runs both again: the same file.
  agent::TrainJobOptions part = named("part");
  part.stop_at_env_steps = 1024;
  const auto first = agent::run_train_job(c, agent::to_yaml(c), part);
  REQUIRE(first.interrupted);
  CHECK(csv_rows(first.run_dir / "confirm.csv").size() == 2);
  const auto state_file = agent::RunDir::open(first.run_dir).trainer_state();
  const auto file = agent::parse_resume_file(text_of(state_file), state_file.string());
  REQUIRE(file.previous);
  REQUIRE(file.previous->job.pending_eval_seconds);
  CHECK(file.previous->job.confirm_rows == 0);
  CHECK(file.current.job.confirm_rows == 1);
  std::ofstream(state_file, std::ios::trunc) << agent::resume_file_text(*file.previous, {});
  agent::TrainJobOptions rest;
  rest.resume_dir = first.run_dir;
  const auto resumed = agent::run_train_job(c, agent::to_yaml(c), rest);
  REQUIRE(resumed.target_env_steps);
  CHECK(*resumed.target_env_steps == 1024);
  CHECK(text_of(resumed.run_dir / "confirm.csv") == text_of(go_on.run_dir / "confirm.csv"));

  // Off (the default): no file, and the evaluation alone counts.
  c.run.target_confirm_episodes = 0;
  const auto off = agent::run_train_job(c, agent::to_yaml(c), named("off"));
  CHECK(off.target_env_steps.value_or(0) == 1024);
  CHECK(!std::filesystem::exists(off.run_dir / "confirm.csv"));

  // A confirmation no longer than the evaluation adds nothing and is not run.
  c.run.target_confirm_episodes = 2;
  const auto same = agent::run_train_job(c, agent::to_yaml(c), named("same"));
  CHECK(same.target_env_steps.value_or(0) == 1024);
  CHECK(csv_rows(same.run_dir / "confirm.csv").size() == 1);  // the header only
}

TEST_CASE(
    "a confirmation below the target keeps the target unreached, evaluation after evaluation") {
  const recur::test::TempDir tmp("target_confirm_fail_test");
  agent::TrainConfig c = cartpole(tmp.path.string());
  c.env.id = "Payout";
  c.run.total_env_steps = 2048;
  c.run.eval_every = 512;
  c.run.final_eval_episodes = 2;  // confirmed like the others (fewer than 20 episodes)
  c.run.target_return = 0.5f;
  c.run.target_confirm_episodes = 20;
  c.run.stop_at_target = true;

  const auto never = agent::run_train_job(c, agent::to_yaml(c), payout_envs("never", false));
  CHECK(!never.target_env_steps);
  CHECK(!never.stopped_at_target);
  CHECK(never.env_steps == 2048);
  CHECK(!std::filesystem::exists(never.run_dir / "checkpoints" / "target.safetensors"));
  const auto eval = csv_rows(never.run_dir / "eval.csv");
  const auto confirm = csv_rows(never.run_dir / "confirm.csv");
  REQUIRE(eval.size() == 5);  // 512, 1024, 1536, the final one at 2048
  REQUIRE(confirm.size() == eval.size());
  for (size_t i = 1; i < eval.size(); ++i) {
    CAPTURE(i);
    REQUIRE(confirm[i].size() == kHeader.size());
    CHECK(confirm[i][0] == eval[i][0]);
    CHECK(std::stod(eval[i][1]) == 1.0);     // every evaluation reaches the target
    CHECK(std::stod(confirm[i][2]) == 0.0);  // and no confirmation does
    CHECK(confirm[i][5] == "20");
    CHECK(confirm[i][6] == "0");
  }

  // Confirmation envs that pay: the first evaluation counts, and the run stops there.
  const auto held = agent::run_train_job(c, agent::to_yaml(c), payout_envs("held", true));
  REQUIRE(held.target_env_steps);
  CHECK(*held.target_env_steps == 512);
  CHECK(held.stopped_at_target);
  const auto held_rows = csv_rows(held.run_dir / "confirm.csv");
  REQUIRE(held_rows.size() == 2);
  CHECK(held_rows[1][6] == "1");
  CHECK(policy::load_policy(held.run_dir / "checkpoints" / "target.safetensors")
            .metadata.at(agent::kMetaEnvSteps) == "512");
}

TEST_CASE("the best checkpoint judges a confirmed evaluation by its confirmation") {
  // Every evaluation scores 1 over its 2 episodes; its confirmation, the fairer measure of those
  // weights, scores 0.1, 0.2, 0.3 and 0.4 in turn (the final evaluation's included), all below
  // the target. By the evaluations alone the first would stay best; by the confirmations the
  // last is.
  const recur::test::TempDir tmp("target_confirm_best_test");
  agent::TrainConfig c = cartpole(tmp.path.string());
  c.env.id = "Payout";
  c.run.eval_every = 512;
  c.run.final_eval_episodes = 2;
  c.run.target_return = 0.5f;
  c.run.target_confirm_episodes = 20;
  auto made = std::make_shared<int>(0);
  const auto r = agent::run_train_job(c, agent::to_yaml(c),
                                      payout_envs("best", [made] { return 0.1 * ++*made; }));
  CHECK(*made == 4);
  CHECK(!r.target_env_steps);
  CHECK(policy::load_policy(r.run_dir / "checkpoints" / "best.safetensors")
            .metadata.at(agent::kMetaEnvSteps) == "2048");
  const auto eval = csv_rows(r.run_dir / "eval.csv");
  REQUIRE(eval.size() == 5);
  CHECK(std::stod(eval[1][1]) == 1.0);  // eval.csv keeps the evaluation's own mean
}
