// Training jobs end to end on small budgets: determinism of the logs, real learning on
// CartPole (a smoke test, kept under a few seconds), and evaluation of the saved checkpoint.
#include "agent/train_job.h"

#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "agent/config/yaml.h"
#include "agent/run/tensorboard.h"
#include "policy/policy_checkpoint.h"
#include "tests/support/gpu_skip.h"
#include "tests/support/temp_dir.h"
#include "tests/support/train_configs.h"

using namespace recur;

namespace {
agent::TrainJobOptions named(const std::string& name, const std::atomic<bool>* stop = nullptr) {
  agent::TrainJobOptions o;
  o.name = name;
  o.stop_requested = stop;
  return o;
}

agent::TrainConfig small_config(const std::string& dir) {
  agent::TrainConfig c = test::small_cartpole_job(dir);
  c.env.normalize_reward = true;
  c.algo.epochs = 4;
  return c;
}

// progress.csv without its timing columns (time_s, fps, act_time_s, learn_time_s, wait_time_s).
std::vector<std::string> progress_without_timing(const std::filesystem::path& run) {
  std::ifstream in(run / "progress.csv");
  std::vector<std::string> rows;
  std::string line;
  std::vector<size_t> skip;
  bool header = true;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    if (header) {
      for (size_t i = 0; i < cells.size(); ++i)
        if (cells[i] == "time_s" || cells[i] == "fps" || cells[i] == "act_time_s" ||
            cells[i] == "learn_time_s" || cells[i] == "wait_time_s")
          skip.push_back(i);
      header = false;
    }
    std::string kept;
    for (size_t i = 0; i < cells.size(); ++i)
      if (std::find(skip.begin(), skip.end(), i) == skip.end()) kept += cells[i] + ",";
    rows.push_back(kept);
  }
  return rows;
}
}  // namespace

TEST_CASE("same seed and config give identical progress rows except timing") {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("recur_train_job_test." + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const auto c = small_config(dir.string());
  const auto a = agent::run_train_job(c, agent::to_yaml(c), named("a"));
  const auto b = agent::run_train_job(c, agent::to_yaml(c), named("b"));
  const auto ra = progress_without_timing(a.run_dir), rb = progress_without_timing(b.run_dir);
  CHECK(ra.size() == 2048 / 64 + 1);
  CHECK(ra == rb);
  for (size_t i = 0; i < std::min(ra.size(), rb.size()); ++i)
    if (ra[i] != rb[i]) {
      MESSAGE("first differing row " << i << "\n" << ra[i] << "\n" << rb[i]);
      break;
    }
  CHECK(a.final_eval.returns == b.final_eval.returns);
  // The run directory holds what users expect.
  for (const char* f : {"config.yaml", "progress.csv", "monitor.csv", "eval.csv",
                        "checkpoints/latest.safetensors", "checkpoints/best.safetensors"})
    CHECK(std::filesystem::exists(a.run_dir / f));
  CHECK(agent::load_config(a.run_dir / "config.yaml", {}) == c);
  const auto ckpt = policy::load_policy(a.run_dir / "checkpoints" / "latest.safetensors");
  CHECK(ckpt.metadata.at(agent::kMetaEnvId) == "CartPole-v1");
  // A different seed gives a different run.
  auto c2 = c;
  c2.run.seed = 1;
  const auto d = agent::run_train_job(c2, agent::to_yaml(c2), named("d"));
  CHECK(progress_without_timing(d.run_dir) != ra);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a training run writes TensorBoard scalars equal to its CSV logs") {
  const recur::test::TempDir tmp("train_tb_test");
  auto c = small_config(tmp.path.string());
  const auto r = agent::run_train_job(c, agent::to_yaml(c), named("tb"));
  const auto scalars = agent::read_tensorboard_scalars(r.run_dir / "tb");
  auto series = [&](const std::string& tag) {
    std::vector<std::pair<int64_t, float>> out;
    for (const auto& e : scalars)
      if (e.tag == tag) out.emplace_back(e.step, e.value);
    return out;
  };
  // progress.csv: one row per update; its env_steps and value_loss columns.
  std::ifstream in(r.run_dir / "progress.csv");
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  {
    std::stringstream ss(line);
    for (std::string h; std::getline(ss, h, ',');) header.push_back(h);
  }
  const auto col = [&](const std::string& name) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  std::vector<std::pair<int64_t, float>> csv_value_loss;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, ',');) cells.push_back(x);
    csv_value_loss.emplace_back(std::stoll(cells[col("env_steps")]),
                                std::stof(cells[col("value_loss")]));
  }
  const auto tb_value_loss = series("train/value_loss");
  REQUIRE(tb_value_loss.size() == csv_value_loss.size());
  for (size_t i = 0; i < csv_value_loss.size(); ++i) {
    CHECK(tb_value_loss[i].first == csv_value_loss[i].first);
    CHECK(tb_value_loss[i].second == doctest::Approx(csv_value_loss[i].second).epsilon(1e-5));
  }
  for (const char* tag :
       {"rollout/ep_rew_mean", "rollout/ep_len_mean", "train/policy_gradient_loss",
        "train/entropy_loss", "train/approx_kl", "train/clip_fraction", "train/explained_variance",
        "train/learning_rate", "time/fps", "recur/grad_norm"})
    CHECK_MESSAGE(!series(tag).empty(), tag);
  // Evaluations: the periodic ones and the final one, as eval.csv.
  const auto ev = series("eval/mean_reward");
  REQUIRE(!ev.empty());
  CHECK(ev.back().second == doctest::Approx(r.final_eval.mean_return()).epsilon(1e-6));
  // Off: no tb/ at all.
  c.run.tensorboard = false;
  const auto off = agent::run_train_job(c, agent::to_yaml(c), named("notb"));
  CHECK(!std::filesystem::exists(off.run_dir / "tb"));
}

TEST_CASE("a short training run learns CartPole") {
  // Smoke test of real learning: a random policy scores about 22 on CartPole-v1; 24k steps of
  // recurrent PPO reach well above 100 (deterministic evaluation over 10 episodes).
  const auto dir = std::filesystem::temp_directory_path() /
                   ("recur_train_smoke_test." + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  auto c = small_config(dir.string());
  c.env.num_envs = 8;
  c.policy.encoder = {32};
  c.policy.hidden = 32;
  c.algo.rollout_steps = 32;
  c.algo.epochs = 10;
  c.algo.num_minibatches = 1;
  c.algo.gamma = 0.98f;
  c.algo.gae_lambda = 0.8f;
  c.run.total_env_steps = 24576;
  c.run.eval_every = 0;
  c.run.final_eval_episodes = 10;
  const auto r = agent::run_train_job(c, agent::to_yaml(c), named("smoke"));
  MESSAGE("smoke run: final deterministic return " << r.final_eval.mean_return());
  CHECK(r.final_eval.mean_return() > 100.0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a stop request ends the run with a checkpoint") {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("recur_train_stop_test." + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const auto c = small_config(dir.string());
  std::atomic<bool> stop{true};
  const auto r = agent::run_train_job(c, agent::to_yaml(c), named("stop", &stop));
  CHECK(r.interrupted);
  CHECK(r.env_steps == 64);  // one update, then the stop
  CHECK(std::filesystem::exists(r.run_dir / "checkpoints" / "latest.safetensors"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("the time to target is reported, and run.stop_at_target ends the run there") {
  const recur::test::TempDir tmp("train_target_test");
  auto c = small_config(tmp.path.string());
  // Any CartPole policy balances for more than 5 steps: the first evaluation (1024 steps)
  // reaches this target.
  c.run.target_return = 5.0f;
  const auto go_on = agent::run_train_job(c, agent::to_yaml(c), named("go_on"));
  REQUIRE(go_on.target_env_steps);
  CHECK(*go_on.target_env_steps == 1024);
  CHECK(*go_on.target == 5.0);
  CHECK(go_on.target_seconds > 0);
  CHECK(!go_on.stopped_at_target);
  CHECK(go_on.env_steps == 2048);  // without stop_at_target the run goes on to the end

  c.run.stop_at_target = true;
  // Synchronous: stops exactly there (beside training it stops where the result arrives).
  c.run.eval_async = false;
  const auto stopped = agent::run_train_job(c, agent::to_yaml(c), named("stopped"));
  CHECK(stopped.stopped_at_target);
  CHECK(!stopped.interrupted);
  CHECK(stopped.env_steps == 1024);
  CHECK(stopped.final_eval.returns.size() == 3);  // the final evaluation still runs

  // Unreachable: reported as not reached, and the run is not stopped.
  c.run.target_return = 1e6f;
  const auto never = agent::run_train_job(c, agent::to_yaml(c), named("never"));
  CHECK(!never.target_env_steps);
  CHECK(never.env_steps == 2048);

  // No target: CartPole-v1's registered threshold (475) is the default.
  c.run.target_return.reset();
  c.run.stop_at_target = false;
  c.run.total_env_steps = 64;
  c.run.eval_every = 0;
  CHECK(*agent::run_train_job(c, agent::to_yaml(c), named("default")).target == 475.0);

  // Pendulum-v1 has no threshold: stop_at_target without run.target_return is an error, before
  // any run directory is made.
  auto p = small_config((tmp.path / "pendulum").string());
  p.env.id = "Pendulum-v1";
  p.run.stop_at_target = true;
  CHECK_THROWS_WITH_AS(agent::run_train_job(p, agent::to_yaml(p), named("p")),
                       doctest::Contains("Pendulum-v1 has no registered reward threshold"),
                       recur::Error);
  CHECK(!std::filesystem::exists(tmp.path / "pendulum"));
}

// progress.csv's rows as (env_steps, episodes, return_mean), return_mean NaN where empty.
namespace {
struct TrainMeanRow {
  int64_t env_steps = 0, episodes = 0;
  double return_mean = 0;
};
std::vector<TrainMeanRow> train_mean_rows(const std::filesystem::path& run) {
  std::ifstream in(run / "progress.csv");
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  std::stringstream hs(line);
  for (std::string c; std::getline(hs, c, ',');) header.push_back(c);
  auto col = [&](const char* name) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  const size_t steps = col("env_steps"), episodes = col("episodes"), mean = col("return_mean");
  REQUIRE(std::max({steps, episodes, mean}) < header.size());
  std::vector<TrainMeanRow> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    cells.resize(header.size());
    rows.push_back({std::stoll(cells[steps]), std::stoll(cells[episodes]),
                    cells[mean].empty() ? std::nan("") : std::stod(cells[mean])});
  }
  return rows;
}
}  // namespace

TEST_CASE(
    "the training mean's time to target: the first update with 100 episodes whose mean reaches "
    "it, kept by a resume, and run.target_measure train_mean stops there") {
  const recur::test::TempDir tmp("train_mean_target_test");
  auto c = small_config(tmp.path.string());
  c.run.total_env_steps = 4096;
  // CartPole's random episodes last ~20 steps (4 envs: ~3 episodes per 64-step update), so the
  // 100-episode window fills about halfway. Every mean is above 10 from the first episode on: the
  // target counts at the first update with a full window, not before.
  c.run.target_return = 10.0f;
  const auto go_on = agent::run_train_job(c, agent::to_yaml(c), named("go_on"));
  // Read back from progress.csv: the first row whose 100 (or more) episodes have a mean >= 10.
  std::optional<int64_t> expected;
  for (const auto& row : train_mean_rows(go_on.run_dir))
    if (!expected && row.episodes >= 100 && row.return_mean >= 10.0) expected = row.env_steps;
  REQUIRE(expected);
  CHECK(*expected > 64);  // the window was not full at the first update
  REQUIRE(go_on.train_target_env_steps);
  CHECK(*go_on.train_target_env_steps == *expected);
  CHECK(go_on.train_target_seconds > 0);
  CHECK(!go_on.stopped_at_target);
  CHECK(go_on.env_steps == 4096);

  // A run stopped after the target and resumed reports the same step (from its resume state).
  agent::TrainJobOptions part = named("part");
  part.stop_at_env_steps = *expected + 64;
  const auto first = agent::run_train_job(c, agent::to_yaml(c), part);
  REQUIRE(first.interrupted);
  agent::TrainJobOptions rest;
  rest.resume_dir = first.run_dir;
  const auto resumed = agent::run_train_job(c, agent::to_yaml(c), rest);
  REQUIRE(resumed.train_target_env_steps);
  CHECK(*resumed.train_target_env_steps == *expected);
  CHECK(resumed.train_target_seconds == doctest::Approx(first.train_target_seconds));

  // Stopping on it needs no periodic evaluation (the evaluation's time to target can then only
  // be the final evaluation's, at the stop).
  c.run.stop_at_target = true;
  c.run.target_measure = "train_mean";
  c.run.eval_every = 0;
  const auto stopped = agent::run_train_job(c, agent::to_yaml(c), named("stopped"));
  CHECK(stopped.stopped_at_target);
  CHECK(stopped.env_steps == *expected);
  CHECK(stopped.target_env_steps.value_or(*expected) == *expected);
  CHECK(stopped.final_eval.returns.size() == 3);

  // With run.target_measure eval, the training mean's target does not stop the run.
  c.run.target_measure = "eval";
  c.run.eval_every = 100000;  // after the budget: no periodic evaluation reaches it
  const auto not_stopped = agent::run_train_job(c, agent::to_yaml(c), named("eval_only"));
  CHECK(!not_stopped.stopped_at_target);
  CHECK(not_stopped.env_steps == 4096);

  // Unreachable: not reached.
  c.run.target_return = 1e6f;
  CHECK(!agent::run_train_job(c, agent::to_yaml(c), named("never")).train_target_env_steps);
}

TEST_CASE("a resumed run produces exactly what an uninterrupted run produces") {
  // The last case double-buffers its envs (env.groups 2, stepped on 2 threads).
  const std::pair<const char*, int> cases[] = {
      {"CartPole-v1", 1}, {"RepeatPreviousEasy-v0", 1}, {"CartPole-v1", 2}};
  for (const auto& [env, groups] : cases) {
    CAPTURE(env);
    CAPTURE(groups);
    const auto dir = std::filesystem::temp_directory_path() /
                     ("recur_resume_test_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    auto c = small_config(dir.string());
    c.env.id = env;
    c.env.groups = groups;
    c.run.threads = groups;
    c.env.normalize_reward = true;
    c.run.total_env_steps = 3072;
    c.run.eval_every = 1024;
    const auto full = agent::run_train_job(c, agent::to_yaml(c), named("full"));
    // Stopped after 1280 steps (between two evaluations), then resumed twice.
    agent::TrainJobOptions part = named("part");
    part.stop_at_env_steps = 1280;
    const auto first = agent::run_train_job(c, agent::to_yaml(c), part);
    CHECK(first.interrupted);
    agent::TrainJobOptions more;
    more.resume_dir = first.run_dir;
    more.stop_at_env_steps = 2200;
    CHECK(agent::run_train_job(c, agent::to_yaml(c), more).interrupted);
    agent::TrainJobOptions rest;
    rest.resume_dir = first.run_dir;
    const auto resumed = agent::run_train_job(c, agent::to_yaml(c), rest);
    CHECK_FALSE(resumed.interrupted);
    CHECK(progress_without_timing(resumed.run_dir) == progress_without_timing(full.run_dir));
    CHECK(resumed.final_eval.returns == full.final_eval.returns);
    auto read = [](const std::filesystem::path& p, bool monitor) {
      std::ifstream in(p);
      std::vector<std::string> rows;
      std::string line;
      if (monitor) std::getline(in, line);  // the t_start line differs
      while (std::getline(in, line)) {
        // monitor.csv: r,l,t -- compare r and l (t is wall time)
        rows.push_back(monitor ? line.substr(0, line.rfind(',')) : line);
      }
      return rows;
    };
    CHECK(read(resumed.run_dir / "monitor.csv", true) == read(full.run_dir / "monitor.csv", true));
    CHECK(read(resumed.run_dir / "eval.csv", false) == read(full.run_dir / "eval.csv", false));
    std::filesystem::remove_all(dir);
  }
}

// The main job (configs/cartpole_novel.yaml, read from the file) with `overrides` on seeds 0, 1,
// 2. One seed is a coin toss, not a check: on the H100 (docs/PERFORMANCE.md, the first H100 run)
// cuda/cuda reached 215.8 (100 episodes; 114.3 over 20) on seed 0 and 500.0 / 498.9 on seeds 1
// and 2, and the CPU's own acceptance table has seeds at 469-500. So the check is what held for
// every measured seed: at least 2 of 3 seeds solve it (>= 400 over 20 episodes) and every seed
// learns (>= 90, four times a random policy's ~22). The data folder is compiled in;
// RECUR_TEST_DATA_DIR overrides it on a device machine, where the source tree lies elsewhere
// (tools/gpu/run.sh sets it).
namespace {
void check_learns_cartpole_novel(const std::vector<std::string>& overrides,
                                 const std::string& name) {
  const char* data_env = std::getenv("RECUR_TEST_DATA_DIR");
  const auto config_file =
      std::filesystem::path(data_env && *data_env ? data_env : RECUR_TEST_DATA_DIR) / ".." / ".." /
      "configs" / "cartpole_novel.yaml";
  const recur::test::TempDir tmp(name + "_train_test");
  int solved = 0;
  for (int seed = 0; seed < 3; ++seed) {
    CAPTURE(seed);
    std::vector<std::string> sets = overrides;
    sets.insert(sets.end(),
                {"run.eval_every=0", "run.final_eval_episodes=20",
                 "run.seed=" + std::to_string(seed), "run.output_dir=" + tmp.path.string()});
    agent::TrainConfig c = agent::load_config(config_file, sets);
    const auto r = agent::run_train_job(c, agent::to_yaml(c), named(name));
    const double ret = r.final_eval.mean_return();
    MESSAGE(name << ", seed " << seed << ": final deterministic return " << ret);
    CHECK(ret >= 90.0);
    if (ret >= 400.0) ++solved;
  }
  CHECK(solved >= 2);
}
}  // namespace

TEST_CASE("training with actor and learner on the GPU learns CartPoleNoVel") {
  if (!recur::test::gpu_or_skip("GPU training run")) return;
  // Both cores on the GPU (CUDA_LAUNCH_BLOCKING and graphs off give the same bits).
  check_learns_cartpole_novel({"device.actor=cuda", "device.learner=cuda"}, "gpu");
}

TEST_CASE("a two-layer mingru_highway learns CartPoleNoVel on the CPU") {
  // The core changed: minGRU with the gated highway (core_spec.h), 2 layers of 64, the CPU step
  // executor acting and the CPU sequence engine learning. Measured (AMD EPYC, 2 cores): 500.0 over
  // 20 episodes on seeds 0, 1 and 2 at 100k env steps, ~3 s each.
  check_learns_cartpole_novel({"policy.core=mingru_highway", "policy.layers=2", "device.actor=cpu",
                               "device.learner=cpu", "run.total_env_steps=100000"},
                              "mingru_highway");
}

TEST_CASE("with double-buffered env groups the main job still learns CartPoleNoVel") {
  // env.groups: 2 (agent/actor_loop.h) on 2 threads: the policy acts on 4 envs while a worker
  // steps the other 4. Measured (AMD EPYC, 2 cores): 500.0 on seeds 0, 1 and 2 at 100k env steps,
  // ~3 s each, as with one group.
  check_learns_cartpole_novel({"env.groups=2", "run.threads=2", "device.actor=cpu",
                               "device.learner=cpu", "run.total_env_steps=100000"},
                              "env_groups");
}

TEST_CASE("a Box2D run resumes: envs without a flat state restart their in-flight episodes") {
  const recur::test::TempDir dir("box2d_resume");
  auto c = small_config(dir.path.string());
  c.env.id = "LunarLander-v3";
  c.run.total_env_steps = 2048;
  c.run.eval_every = 1024;
  agent::TrainJobOptions part = named("part");
  part.stop_at_env_steps = 1024;
  const auto first = agent::run_train_job(c, agent::to_yaml(c), part);
  CHECK(first.interrupted);
  agent::TrainJobOptions rest;
  rest.resume_dir = first.run_dir;
  // The trainer's constructor has reset every env (a fresh world); Env::restore then starts a new
  // episode from the checkpoint's RNG and the actor resets those slots (env_test.cc checks the
  // env side), instead of continuing the old episode's step count, return and recurrent state on
  // a world that restarted.
  const auto resumed = agent::run_train_job(c, agent::to_yaml(c), rest);
  CHECK_FALSE(resumed.interrupted);
  CHECK(resumed.env_steps == 2048);
  CHECK(resumed.final_eval.returns.size() == 3);
}

TEST_CASE(
    "a run killed between saving its trainer state and its checkpoint resumes from the one "
    "before") {
  // The trainer state is written first and keeps the previous generation: the state on disk
  // then names a checkpoint that never arrived, and the resume takes the previous one. The logs
  // hold rows past that checkpoint (and a row cut short); the resume drops them, so that CSV and
  // TensorBoard end as an uninterrupted run's.
  namespace fs = std::filesystem;
  recur::test::TempDir tmp("killed_save_test");
  auto c = small_config(tmp.path.string());
  c.run.total_env_steps = 2048;
  const auto full = agent::run_train_job(c, agent::to_yaml(c), named("full"));
  agent::TrainJobOptions part = named("part");
  part.stop_at_env_steps = 1088;  // after the evaluation at 1024: a state with a previous one
  const auto first = agent::run_train_job(c, agent::to_yaml(c), part);
  REQUIRE(first.interrupted);
  const fs::path latest = first.run_dir / "checkpoints" / "latest.safetensors";
  fs::copy_file(latest, tmp.path / "latest_1088.safetensors");
  agent::TrainJobOptions more;
  more.resume_dir = first.run_dir;
  more.stop_at_env_steps = 1216;
  REQUIRE(agent::run_train_job(c, agent::to_yaml(c), more).interrupted);
  // "Killed" after the state at 1216 was written, before its checkpoint: the 1088 one is there.
  fs::copy_file(tmp.path / "latest_1088.safetensors", latest, fs::copy_options::overwrite_existing);
  std::ofstream(first.run_dir / "progress.csv", std::ios::app) << "1280,0.5,12";
  agent::TrainJobOptions rest;
  rest.resume_dir = first.run_dir;
  const auto resumed = agent::run_train_job(c, agent::to_yaml(c), rest);
  CHECK_FALSE(resumed.interrupted);
  CHECK(progress_without_timing(resumed.run_dir) == progress_without_timing(full.run_dir));
  auto steps_by_tag = [](const fs::path& run) {
    std::map<std::string, std::vector<int64_t>> steps;
    for (const auto& s : agent::read_tensorboard_scalars(run / "tb"))
      steps[s.tag].push_back(s.step);
    return steps;
  };
  const auto got = steps_by_tag(resumed.run_dir);
  CHECK(got == steps_by_tag(full.run_dir));
  CHECK(got.at("train/value_loss").size() == 2048 / 64);
}

TEST_CASE("env.decorrelate_steps changes where the first episodes end, and counts no env step") {
  const recur::test::TempDir tmp("train_decorrelate_test");
  auto c = small_config(tmp.path.string());
  c.run.total_env_steps = 512;
  c.run.eval_every = 0;
  auto monitor_rows = [](const std::filesystem::path& run) {
    std::ifstream in(run / "monitor.csv");
    std::vector<std::string> rows;
    std::string line;
    std::getline(in, line);  // {"t_start": ..., "env_id": ...}
    std::getline(in, line);  // r,l,t
    // Returns and lengths only (the third column is wall time).
    while (std::getline(in, line)) rows.push_back(line.substr(0, line.rfind(',')));
    return rows;
  };
  const auto plain = agent::run_train_job(c, agent::to_yaml(c), named("plain"));
  c.env.decorrelate_steps = 40;
  const auto spread = agent::run_train_job(c, agent::to_yaml(c), named("spread"));
  const auto again = agent::run_train_job(c, agent::to_yaml(c), named("again"));
  CHECK(spread.env_steps == plain.env_steps);
  CHECK(progress_without_timing(spread.run_dir).size() ==
        progress_without_timing(plain.run_dir).size());
  const auto a = monitor_rows(plain.run_dir), b = monitor_rows(spread.run_dir);
  // The first episodes: the 4 envs' first ones, which the random steps shortened.
  REQUIRE(a.size() > 8);
  REQUIRE(b.size() > 8);
  CHECK(std::vector(a.begin(), a.begin() + 8) != std::vector(b.begin(), b.begin() + 8));
  CHECK(monitor_rows(again.run_dir) == b);  // seeded: the same run twice
}
