// The resume state read back (agent/ppo/trainer_state_parse.cc): what the writers write parses, and
// malformed files give a recur::Error, never a JSON library exception, an out-of-range cast or a
// buffer overrun. The malformed inputs are the ones tools/fuzz/trainer_state_fuzzer found.
#include "agent/ppo/trainer_state.h"
#include "agent/run/resume_state.h"

#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "agent/config/yaml.h"
#include "agent/train_job.h"
#include "core/error.h"
#include "policy/checkpoint.h"
#include "policy/policy_checkpoint.h"

using namespace recur;
using nlohmann::json;

namespace {

json small_trainer_state() {
  const json rng = {1, 2, 3, 4};
  return {{"format", "recur.trainer_state/1"},
          {"env_steps", 64},
          {"envs", nullptr},
          {"venv_episode_start", nullptr},
          {"recurrent_states", {0.5, -0.25}},
          {"obs_norm", {{"mean", {0.0}}, {"var", {1.0}}, {"count", 64.0}}},
          {"reward_norm", {{"running_return", {0.0}}, {"mean", 0.0}, {"var", 1.0}, {"count", 1.0}}},
          {"loop", {{"rng", rng}, {"next_episode_start", {0}}, {"started", true}}},
          {"ppo", {{"rng", rng}, {"nonfinite_streak", 0}}},
          {"adam", json::object()}};
}

json small_resume_state() {
  return {{"trainer", small_trainer_state().dump()},
          {"job",
           {{"env_steps", 64},
            {"returns", {1.0}},
            {"lengths", {1}},
            {"episodes", 1},
            {"progress_rows", 1},
            {"eval_rows", 0},
            {"next_eval", -1},
            {"next_ckpt", 128},
            {"best", nullptr},
            {"elapsed", 0.5}}}};
}

// A CartPole job of 256 env steps (2 envs x 16 steps an update) writing under `dir`.
agent::TrainConfig small_job(const std::filesystem::path& dir, int final_eval_episodes) {
  agent::TrainConfig c;
  c.env.id = "CartPole-v1";
  c.env.num_envs = 2;
  c.policy.encoder = {8};
  c.policy.hidden = 8;
  c.algo.rollout_steps = 16;
  c.algo.epochs = 1;
  c.algo.num_minibatches = 1;
  c.run.total_env_steps = 256;
  c.run.eval_every = 0;
  c.run.final_eval_episodes = final_eval_episodes;
  c.run.output_dir = dir.string();
  return c;
}

// The job stopped at 64 env steps, its resume state written.
agent::TrainJobResult stopped_at_64(const agent::TrainConfig& c) {
  agent::TrainJobOptions part;
  part.name = "part";
  part.stop_at_env_steps = 64;
  return agent::run_train_job(c, agent::to_yaml(c), part);
}

std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("trainer state: the fields of a resume file parse into values") {
  const agent::ResumeState r = agent::parse_resume_state(small_resume_state().dump(), "f");
  REQUIRE(r.trainer_states.size() == 1);
  CHECK(r.job.next_ckpt == 128);
  CHECK_FALSE(r.job.best.has_value());
  const agent::TrainerState t = agent::parse_trainer_state(r.trainer_states[0]);
  CHECK(t.env_steps == 64);
  CHECK(t.local_env_steps == 64);  // absent: env_steps
  CHECK_FALSE(t.envs.has_value());
  CHECK(t.loop_rng == Rng::State{1, 2, 3, 4});
  CHECK(t.next_episode_start == std::vector<uint8_t>{0});
}

TEST_CASE("trainer state: malformed values are recur::Errors naming the field") {
  // A missing job key threw nlohmann's out_of_range out of the train job.
  json r = small_resume_state();
  r["job"].erase("next_eval");
  CHECK_THROWS_WITH_AS(agent::parse_resume_state(r.dump(), "dir/trainer_state.safetensors"),
                       doctest::Contains("dir/trainer_state.safetensors is not a valid"), Error);
  // Floats where integers belong were cast without a range check (undefined behaviour).
  r = small_resume_state();
  r["job"]["episodes"] = 1e300;
  CHECK_THROWS_WITH_AS(agent::parse_resume_state(r.dump(), "f"),
                       doctest::Contains("job.episodes is 1e+300, not an integer"), Error);
  json t = small_trainer_state();
  t["loop"]["rng"] = {5, 6, 9.12234e19, 1};
  CHECK_THROWS_WITH_AS(agent::parse_trainer_state(t.dump()), doctest::Contains("loop.rng"), Error);
  t = small_trainer_state();
  t["ppo"]["nonfinite_streak"] = 1e10;
  CHECK_THROWS_AS(agent::parse_trainer_state(t.dump()), Error);
  t = small_trainer_state();
  t["loop"]["next_episode_start"] = {0, 2};
  CHECK_THROWS_WITH_AS(agent::parse_trainer_state(t.dump()),
                       doctest::Contains("loop.next_episode_start = 2 is out of range"), Error);
  // A pending rollout (async) lives in format 2's tensors; its counts are checked.
  t = small_trainer_state();
  t["pending"] = {{"version", 0}, {"env_steps", 64}, {"steps", 16}, {"has_reset_steps", false}};
  CHECK_THROWS_WITH_AS(agent::parse_trainer_state(t.dump()), doctest::Contains("needs format 2"),
                       Error);
  t["format"] = "recur.trainer_state/2";
  CHECK(agent::parse_trainer_state(t.dump()).pending->steps == 16);
  t["pending"]["steps"] = 0;
  CHECK_THROWS_WITH_AS(agent::parse_trainer_state(t.dump()), doctest::Contains("pending.steps"),
                       Error);
  CHECK_THROWS_AS(agent::parse_trainer_state("[1]"), Error);
  CHECK_THROWS_AS(agent::parse_resume_state(R"({"trainer": 1, "job": {}})", "f"), Error);
}

TEST_CASE("trainer state: a resume with more episode-start flags than envs is refused") {
  // Trainer::restore_state copied the flags into the actor loop's buffer without a size check.
  const auto dir = std::filesystem::temp_directory_path() /
                   ("recur_trainer_state_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const agent::TrainConfig c = small_job(dir, 1);
  const auto first = stopped_at_64(c);
  REQUIRE(first.interrupted);

  const auto file = first.run_dir / "trainer_state.safetensors";
  json state = json::parse(read_all(file));
  const agent::ResumeState parsed = agent::parse_resume_state(state.dump(), file.string());
  CHECK(agent::parse_trainer_state(parsed.trainer_states[0]).next_episode_start.size() == 2);
  json trainer = json::parse(state["trainer"].get<std::string>());
  trainer["loop"]["next_episode_start"] = {0, 0, 0, 0, 0, 0, 0, 0};
  state["trainer"] = trainer.dump();
  std::ofstream(file, std::ios::binary | std::ios::trunc) << state.dump();

  agent::TrainJobOptions rest;
  rest.resume_dir = first.run_dir;
  CHECK_THROWS_WITH_AS(agent::run_train_job(c, agent::to_yaml(c), rest),
                       doctest::Contains("8 episode-start flags for 2 envs"), Error);
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "trainer state: format 2 keeps states and moments as tensors, and format 1 resumes the same") {
  // Every env's recurrent state and Adam's moments went into the JSON as text: ~10 MB for 1024
  // envs x LSTM-128, written at every evaluation. Format 2 moves them to the tensor file beside
  // it; a format-1 file (data-parallel runs, older runs) must still resume, to the same bits.
  const auto dir = std::filesystem::temp_directory_path() /
                   ("recur_trainer_state_bulk_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const agent::TrainConfig c = small_job(dir / "a", 2);
  const auto first = stopped_at_64(c);
  REQUIRE(first.interrupted);

  const auto file = first.run_dir / "trainer_state.safetensors";
  json state = json::parse(read_all(file));
  json trainer = json::parse(state["trainer"].get<std::string>());
  CHECK(trainer["format"] == "recur.trainer_state/2");
  CHECK_FALSE(trainer.contains("recurrent_states"));
  CHECK_FALSE(trainer.contains("adam"));
  REQUIRE(state.contains("trainer_tensors"));
  const auto tensors =
      policy::load_checkpoint(first.run_dir / "checkpoints" / state["trainer_tensors"]).tensors;
  const int64_t state_size = 2 * 2 * 8;  // actor and critic LSTMs: h and c of 8 each
  REQUIRE(tensors.count("recurrent_states") == 1);
  CHECK(tensors.at("recurrent_states").shape == std::vector<int64_t>{2, state_size});
  CHECK(tensors.count("optim.adam.step") == 1);
  CHECK(tensors.at("optim.adam.step").data[0] == 2.0f);  // 2 updates of 16 x 2 steps

  // The same run directory in format 1: the arrays back in the JSON, no tensor file.
  const auto copy = dir / "b" / first.run_dir.filename();
  std::filesystem::create_directories(copy.parent_path());
  std::filesystem::copy(first.run_dir, copy, std::filesystem::copy_options::recursive);
  trainer["format"] = "recur.trainer_state/1";
  trainer["adam"] = json::object();
  for (const auto& [name, t] : tensors)
    (name == "recurrent_states" ? trainer["recurrent_states"] : trainer["adam"][name]) = t.data;
  state["trainer"] = trainer.dump();
  std::filesystem::remove(copy / "checkpoints" / state["trainer_tensors"].get<std::string>());
  state.erase("trainer_tensors");
  state.erase("previous");
  std::ofstream(copy / "trainer_state.safetensors", std::ios::binary | std::ios::trunc)
      << state.dump();

  agent::TrainJobOptions rest;
  rest.resume_dir = first.run_dir;
  const auto two = agent::run_train_job(c, agent::to_yaml(c), rest);
  rest.resume_dir = copy;
  const auto one = agent::run_train_job(c, agent::to_yaml(c), rest);
  CHECK(two.env_steps == 256);
  CHECK(one.env_steps == 256);
  CHECK(one.final_eval.returns == two.final_eval.returns);
  CHECK(policy::load_policy(copy / "checkpoints" / "latest.safetensors").tensors ==
        policy::load_policy(first.run_dir / "checkpoints" / "latest.safetensors").tensors);
  // The resumed format-1 run saves format 2 from then on.
  const json saved = json::parse(read_all(copy / "trainer_state.safetensors"));
  CHECK(json::parse(saved["trainer"].get<std::string>())["format"] == "recur.trainer_state/2");

  // A format-2 file whose tensor file lost its states is refused by name.
  agent::TrainerState t = agent::parse_trainer_state(trainer.dump());
  CHECK_FALSE(t.bulk_in_tensors);
  trainer["format"] = "recur.trainer_state/2";
  trainer.erase("recurrent_states");
  trainer.erase("adam");
  t = agent::parse_trainer_state(trainer.dump());
  CHECK(t.bulk_in_tensors);
  CHECK_THROWS_WITH_AS(agent::take_bulk_tensors({}, t),
                       doctest::Contains("no tensor 'recurrent_states'"), Error);
  std::filesystem::remove_all(dir);
}
