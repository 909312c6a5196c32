// Evaluations beside training (run.eval_async, agent/run/background_eval.h): the same eval.csv,
// time to target and errors as synchronous evaluations, a stop at the target, a resume of a run
// that stopped while an evaluation was pending, and the evaluation thread's nice value.
#include "agent/run/background_eval.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "agent/algorithm.h"
#include "agent/config/yaml.h"
#include "agent/run/resume_state.h"
#include "agent/run/run_dir.h"
#include "agent/train_job.h"
#include "core/error.h"
#include "policy/policy_checkpoint.h"
#include "tests/support/skip.h"
#include "tests/support/temp_dir.h"
#include "tests/support/train_configs.h"

using namespace recur;

namespace {
agent::TrainConfig tiny_config(const std::string& dir, bool async) {
  agent::TrainConfig c = test::small_cartpole_job(dir);
  c.run.eval_every = 256;
  c.run.eval_episodes = 4;
  c.run.eval_async = async;
  return c;
}

agent::TrainJobResult train(const agent::TrainConfig& c, const std::string& name,
                            agent::TrainJobOptions o = {}) {
  o.name = name;
  return agent::run_train_job(c, agent::to_yaml(c), o);
}

std::vector<std::string> lines(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// progress.csv without its wall-time columns (the first line names them).
std::vector<std::string> progress_rows(const std::filesystem::path& run) {
  std::vector<std::string> rows = lines(run / "progress.csv"), out;
  std::vector<bool> timing;
  for (const std::string& row : rows) {
    std::stringstream ss(row);
    std::string kept;
    size_t i = 0;
    for (std::string cell; std::getline(ss, cell, ','); ++i) {
      if (timing.size() <= i)
        timing.push_back(cell == "time_s" || cell == "fps" || cell.ends_with("_time_s"));
      if (!timing[i]) kept += cell + ",";
    }
    out.push_back(kept);
  }
  return out;
}

double column(const std::string& row, int index) {
  std::stringstream ss(row);
  std::string cell;
  for (int i = 0; i <= index; ++i) std::getline(ss, cell, ',');
  return std::stod(cell);
}
}  // namespace

TEST_CASE("a background evaluation rethrows its error when taken, and poll does not wait") {
  std::atomic<bool> release{false};
  agent::BackgroundEval bg([&](const agent::EvalSnapshot& s) -> agent::EvalResult {
    while (!release) std::this_thread::yield();
    if (s.env_steps == 2) throw Error("evaluation failed at step 2");
    return {{1.0}, {3}};
  });
  CHECK(!bg.busy());
  CHECK(!bg.wait());
  agent::EvalSnapshot s;
  s.env_steps = 1;
  bg.submit(s);
  CHECK(bg.busy());
  CHECK(!bg.poll());  // still running
  release = true;
  const auto out = bg.wait();
  REQUIRE(out);
  CHECK(out->snapshot.env_steps == 1);
  CHECK(out->result.returns == std::vector<double>{1.0});
  CHECK(!bg.busy());
  s.env_steps = 2;
  bg.submit(s);
  CHECK_THROWS_WITH_AS(bg.wait(), "evaluation failed at step 2", Error);
  CHECK(!bg.busy());
  s.env_steps = 3;
  bg.submit(s);  // left running: the destructor joins it
}

#if defined(__linux__)
TEST_CASE("a background evaluation runs at its nice value, the job's thread at its own") {
  // The evaluation reports its thread's nice value as its one return.
  auto nice_here = [] { return getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid))); };
  auto report = [&](const agent::EvalSnapshot&) -> agent::EvalResult {
    return {{static_cast<double>(nice_here())}, {1}};
  };
  const int job = nice_here();
  const int want = job + 7 > 19 ? 19 : job + 7;
  agent::BackgroundEval bg(report, want);
  bg.submit({});
  const auto out = bg.wait();
  REQUIRE(out);
  CHECK(out->result.returns == std::vector<double>{static_cast<double>(want)});
  CHECK(nice_here() == job);
  // 0: the thread keeps the job's value.
  agent::BackgroundEval same(report, 0);
  same.submit({});
  const auto kept = same.wait();
  REQUIRE(kept);
  CHECK(kept->result.returns == std::vector<double>{static_cast<double>(job)});
}
#endif

TEST_CASE("evaluations beside training log what synchronous ones log") {
  const test::TempDir tmp("background_eval_same");
  // The target: the best periodic evaluation of a synchronous run (the first row reaching it).
  auto sync = tiny_config(tmp.path.string(), false);
  const auto probe = train(sync, "probe");
  const auto rows = lines(probe.run_dir / "eval.csv");
  REQUIRE(rows.size() == 2048 / 256 - 1 + 1 + 1);  // header, 7 periodic, the final one
  size_t best = 1;
  for (size_t i = 2; i + 1 < rows.size(); ++i)
    if (column(rows[i], 1) > column(rows[best], 1)) best = i;
  sync.run.target_return = static_cast<float>(column(rows[best], 1)) - 1e-3f;
  auto async = sync;
  async.run.eval_async = true;
  const auto a = train(sync, "sync"), b = train(async, "async");
  CHECK(lines(a.run_dir / "eval.csv") == rows);
  CHECK(lines(b.run_dir / "eval.csv") == rows);
  CHECK(progress_rows(b.run_dir) == progress_rows(a.run_dir));
  CHECK(b.final_eval.returns == a.final_eval.returns);
  REQUIRE(a.target_env_steps);
  REQUIRE(b.target_env_steps);
  CHECK(*a.target_env_steps == static_cast<int64_t>(column(rows[best], 0)));
  CHECK(*b.target_env_steps == *a.target_env_steps);
  CHECK(b.target_seconds > 0);
  // The best checkpoint holds the evaluated weights, not those of the update the result came in.
  const auto best_a = policy::load_policy(a.run_dir / "checkpoints" / "best.safetensors");
  const auto best_b = policy::load_policy(b.run_dir / "checkpoints" / "best.safetensors");
  CHECK(best_b.metadata.at(agent::kMetaEnvSteps) == best_a.metadata.at(agent::kMetaEnvSteps));
  CHECK(best_b.tensors == best_a.tensors);
}

TEST_CASE("run.stop_at_target stops at the first update after the result arrives") {
  const test::TempDir tmp("background_eval_stop");
  auto c = tiny_config(tmp.path.string(), true);
  c.run.target_return = 5.0f;  // the first evaluation (256 steps) reaches it
  c.run.stop_at_target = true;
  const auto r = train(c, "stop");
  CHECK(r.stopped_at_target);
  CHECK(!r.interrupted);
  REQUIRE(r.target_env_steps);
  CHECK(*r.target_env_steps == 256);
  CHECK(r.env_steps >= 256);
  CHECK(r.env_steps < 2048);
  CHECK(r.final_eval.returns.size() == 3);
  const auto rows = lines(r.run_dir / "eval.csv");
  REQUIRE(rows.size() >= 3);
  CHECK(rows[1].starts_with("256,"));
}

TEST_CASE("an evaluation that fails beside training fails the run with its own message") {
  // Trained on CartPole-v1 (4 observations), evaluated on MountainCar-v0 (2): the evaluation
  // refuses the policy; training and its checkpoints do not notice.
  const test::TempDir tmp("background_eval_error");
  std::string messages[2];
  for (const bool async : {false, true}) {
    auto c = tiny_config(tmp.path.string(), async);
    c.env.id = "MountainCar-v0";
    agent::TrainJobOptions o;
    o.make_algorithm = [](const agent::TrainConfig& config, std::unique_ptr<envs::BatchEnv>,
                          agent::dist::Communicator* comm) {
      auto other = config;
      other.env.id = "CartPole-v1";
      return agent::make_algorithm(other, nullptr, comm);
    };
    messages[async] = test::error_of([&] { train(c, async ? "async" : "sync", o); });
  }
  CHECK(messages[0].find("the policy takes observations of size 4") != std::string::npos);
  CHECK(messages[1] == messages[0]);
}

TEST_CASE("a run stopped with its evaluation pending resumes to an uninterrupted run's logs") {
  const test::TempDir tmp("background_eval_resume");
  const auto c = tiny_config(tmp.path.string(), true);
  const auto full = train(c, "full");
  // The resume runs the pending evaluation beside training, or (eval_async off) first of all.
  for (const bool resume_async : {true, false}) {
    CAPTURE(resume_async);
    // Stopped at the evaluation point 1024: the job waits for that evaluation and saves again. A
    // process killed before the result arrived left the save before, whose evaluation is
    // pending: make that generation the current one, as such a process would have left it.
    agent::TrainJobOptions part;
    part.stop_at_env_steps = 1024;
    const auto first = train(c, "part", part);
    REQUIRE(first.interrupted);
    const auto state_file = agent::RunDir::open(first.run_dir).trainer_state();
    std::stringstream text;
    text << std::ifstream(state_file).rdbuf();
    const auto file = agent::parse_resume_file(text.str(), state_file.string());
    REQUIRE(file.previous);
    CHECK(!file.current.job.pending_eval_seconds);
    REQUIRE(file.previous->job.pending_eval_seconds);
    CHECK(file.previous->job.env_steps == 1024);
    CHECK(file.previous->job.eval_rows == file.current.job.eval_rows - 1);
    std::ofstream(state_file, std::ios::trunc) << agent::resume_file_text(*file.previous, {});
    auto resume_config = c;
    resume_config.run.eval_async = resume_async;
    agent::TrainJobOptions rest;
    rest.resume_dir = first.run_dir;
    const auto resumed = train(resume_config, "rest", rest);
    CHECK_FALSE(resumed.interrupted);
    CHECK(lines(resumed.run_dir / "eval.csv") == lines(full.run_dir / "eval.csv"));
    CHECK(progress_rows(resumed.run_dir) == progress_rows(full.run_dir));
    CHECK(resumed.final_eval.returns == full.final_eval.returns);
  }
}

TEST_CASE("evaluations beside training film the same evaluations as synchronous ones") {
  const test::TempDir tmp("background_eval_video");
  std::vector<std::string> videos[2];
  for (const bool async : {false, true}) {
    auto c = tiny_config(tmp.path.string(), async);
    c.run.total_env_steps = 1024;
    c.run.video_every_evals = 2;  // the evaluations at 512 and the final one (1024)
    const auto r = train(c, async ? "async" : "sync");
    if (!std::filesystem::exists(r.run_dir / "videos")) {
      test::skip("no videos: this build cannot record (RECUR_RECORDING=OFF)");
      return;
    }
    for (const auto& f : std::filesystem::directory_iterator(r.run_dir / "videos"))
      videos[async].push_back(f.path().filename().string());
    std::sort(videos[async].begin(), videos[async].end());
  }
  CHECK(videos[0] == std::vector<std::string>{"rl-video-eval-1024.mp4", "rl-video-eval-512.mp4"});
  CHECK(videos[1] == videos[0]);
}
