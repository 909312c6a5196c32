// The recording loop: returns equal the evaluator's on the same reset seeds, episodes replay
// bit-exactly from their seed, the Episode rows have Minari's shapes, the recurrent state rows
// start at zero, videos have N+1 frames, a failure leaves no video behind, and training-time
// videos change nothing about training.
#include "agent/record/recorder.h"

#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "agent/config/yaml.h"
#include "agent/evaluator.h"
#include "agent/ppo/trainer.h"
#include "agent/record/film.h"
#include "agent/record/minari_writer.h"
#include "agent/record/video_writer.h"
#include "agent/train_job.h"
#include "core/error.h"
#include "envs/registry.h"
#include "envs/vector_env.h"
#include "policy/policy_actor.h"
#include "tests/support/temp_dir.h"
#include "tests/support/train_configs.h"

using namespace recur;
namespace rec = recur::agent::record;

namespace {

struct SmallPolicy {
  policy::PolicySpec spec;
  policy::TensorMap tensors;
};

// A freshly initialised policy for env_id; actor_gain 1 so that the actions depend on the
// observations (the default 0.01 gives a near-uniform policy).
SmallPolicy small_policy(const std::string& env_id, const std::string& core = "lstm",
                         int layers = 1, bool shared_core = true) {
  agent::PolicyConfig c;
  c.encoder = {16};
  c.hidden = 8;
  c.core = core;
  c.layers = layers;
  c.shared_core = shared_core;
  c.actor_gain = 1.0f;
  const auto env = envs::make(env_id);
  SmallPolicy p;
  p.spec = agent::make_policy_spec(c, env->observation_space(), env->action_space());
  Rng rng(42);
  p.tensors = policy::init_policy(p.spec, rng);
  return p;
}

rec::RecordConfig config_for(const std::string& env_id, int episodes, uint64_t seed) {
  rec::RecordConfig c;
  c.env_id = env_id;
  c.episodes = episodes;
  c.seed = seed;
  return c;
}

}  // namespace

TEST_CASE("video schedules: list, every K, Gymnasium's capped cubic") {
  std::vector<int> cubic;
  for (int e = 0; e < 5000; ++e)
    if (rec::capped_cubic_schedule(e)) cubic.push_back(e);
  CHECK(cubic ==
        std::vector<int>{0, 1, 8, 27, 64, 125, 216, 343, 512, 729, 1000, 2000, 3000, 4000});
  const auto list = rec::VideoSchedule::list("0, 3,10");
  CHECK(list.episodes == std::vector<int>{0, 3, 10});
  CHECK(list.films(3));
  CHECK_FALSE(list.films(4));
  const auto every = rec::VideoSchedule::every_k(5);
  CHECK(every.films(0));
  CHECK(every.films(10));
  CHECK_FALSE(every.films(11));
  CHECK_FALSE(rec::VideoSchedule{}.films(0));
  CHECK_THROWS_WITH_AS(rec::VideoSchedule::list("0,x"), doctest::Contains("'x' is not"), Error);
  CHECK_THROWS_AS(rec::VideoSchedule::list("1,,2"), Error);
  CHECK_THROWS_AS(rec::VideoSchedule::list("-1"), Error);
  CHECK_THROWS_AS(rec::VideoSchedule::every_k(0), Error);
}

// Exact comparison with evaluate_policy: the evaluator resets its env i with derive_seed(seed, i)
// and runs its batch through one PolicyActor, so one evaluation of one episode on one env (seed
// s) is the episode the Recorder records with reset seed derive_seed(s, 0), on the same batch
// size of one. Deterministic actions only: the evaluator's sampling stream is
// derive_seed(s, 77), the Recorder's derive_seed(reset seed, 77) (see the hand loop below for
// the stochastic case).
TEST_CASE("recorded returns equal evaluate_policy's on the same seeds") {
  for (const char* env_id : {"CartPole-v1", "Pendulum-v1", "CartPoleNoVel-v1"}) {
    CAPTURE(env_id);
    const SmallPolicy p = small_policy(env_id, "gru");
    for (uint64_t s = 100; s < 104; ++s) {
      agent::EvalConfig e;
      e.env_id = env_id;
      e.episodes = 1;
      e.num_envs = 1;
      e.seed = s;
      e.deterministic = true;
      const agent::EvalResult r = agent::evaluate_policy(p.spec, p.tensors, e);
      rec::Recorder recorder(config_for(env_id, 1, derive_seed(s, 0)), p.spec, p.tensors);
      const rec::Episode ep = recorder.record_episode(0);
      CHECK(ep.total_reward() == r.returns.at(0));  // bit-exact
      CHECK(ep.steps() == r.lengths.at(0));
    }
  }
}

TEST_CASE("a recorder on an env built elsewhere records what one on the env id records") {
  const SmallPolicy p = small_policy("Pendulum-v1", "gru");
  rec::RecordConfig c = config_for("Pendulum-v1", 2, 31);
  c.env_id = "";  // not used with an env given
  auto env = envs::make("Pendulum-v1", Options{}.set("max_episode_steps", "50"));
  rec::Recorder given(c, std::move(env), p.spec, p.tensors);
  rec::Recorder by_id(config_for("Pendulum-v1", 2, 31), p.spec, p.tensors);
  for (int i = 0; i < 2; ++i) {
    const rec::Episode a = given.record_episode(i), b = by_id.record_episode(i);
    CHECK(a.steps() == 50);  // the given env's own time limit
    CHECK(std::equal(a.rewards.begin(), a.rewards.end(), b.rewards.begin()));
  }
  CHECK_THROWS_AS(rec::Recorder(c, nullptr), std::invalid_argument);
  c.record_state = true;
  CHECK_THROWS_WITH_AS(rec::Recorder(c, envs::make("CartPole-v1")),
                       doctest::Contains("the random policy has none"), Error);
}

TEST_CASE("stochastic recording follows its documented seeding (a hand loop)") {
  const SmallPolicy p = small_policy("CartPole-v1");
  rec::RecordConfig c = config_for("CartPole-v1", 3, 7);
  c.deterministic = false;
  rec::Recorder recorder(c, p.spec, p.tensors);
  std::vector<rec::Episode> recorded;
  const auto summary = recorder.run([&](const rec::Episode& e) { recorded.push_back(e); });
  REQUIRE(recorded.size() == 3);
  auto env = envs::make("CartPole-v1");
  policy::PolicyActor actor(p.spec, 1);
  actor.load(p.tensors);
  for (int i = 0; i < 3; ++i) {
    CAPTURE(i);
    // Episode i: reset seed 7 + i, actions from Rng(derive_seed(7 + i, 77)), state zeroed.
    Rng rng(derive_seed(7 + static_cast<uint64_t>(i), 77));
    const auto o = env->reset(7 + static_cast<uint64_t>(i));
    std::vector<float> obs(o.begin(), o.end());
    std::vector<uint8_t> start = {1};
    std::vector<float> a(1), lp(1), v(1);
    double ret = 0;
    int n = 0;
    for (bool done = false; !done; ++n) {
      actor.act(obs, start, rng, false, a, lp, v);
      start[0] = 0;
      const auto r = env->step(a);
      ret += r.reward;
      done = r.done();
      obs.assign(r.obs.begin(), r.obs.end());
    }
    CHECK(recorded[static_cast<size_t>(i)].total_reward() == ret);
    CHECK(recorded[static_cast<size_t>(i)].steps() == n);
    CHECK(summary.returns[static_cast<size_t>(i)] == ret);
  }
  // Episodes do not depend on each other: episode 2 alone is episode 2 of the run.
  rec::Recorder again(c, p.spec, p.tensors);
  CHECK(again.record_episode(2).actions == recorded[2].actions);
}

TEST_CASE("episodes replay bit-exactly from their seed") {
  const SmallPolicy p = small_policy("CartPole-v1");
  for (const bool random : {false, true}) {
    CAPTURE(random);
    rec::RecordConfig c = config_for("CartPole-v1", 4, 2024);
    c.deterministic = false;
    std::unique_ptr<rec::Recorder> recorder =
        random ? std::make_unique<rec::Recorder>(c)
               : std::make_unique<rec::Recorder>(c, p.spec, p.tensors);
    std::vector<rec::Episode> episodes;
    recorder->run([&](const rec::Episode& e) { episodes.push_back(e); });
    REQUIRE(episodes.size() == 4);
    auto env = envs::make("CartPole-v1");
    for (size_t i = 0; i < episodes.size(); ++i) {
      const rec::Episode& e = episodes[i];
      CAPTURE(i);
      CHECK(e.seed == 2024 + i);
      const int n = e.steps(), od = e.obs_dim;
      const auto o0 = env->reset(e.seed);
      CHECK(std::equal(o0.begin(), o0.end(), e.observations.begin()));
      bool same = true;
      for (int t = 0; t < n; ++t) {
        const auto r = env->step(std::span<const float>(e.actions).subspan(
            static_cast<size_t>(t) * e.action_dim, static_cast<size_t>(e.action_dim)));
        same = same && r.reward == e.rewards[static_cast<size_t>(t)] &&
               r.terminated == (e.terminations[static_cast<size_t>(t)] == 1) &&
               r.truncated == (e.truncations[static_cast<size_t>(t)] == 1) &&
               std::equal(r.obs.begin(), r.obs.end(),
                          e.observations.begin() + static_cast<ptrdiff_t>(t + 1) * od);
        if (t + 1 < n) same = same && !r.done();
        if (t + 1 == n) same = same && r.done();
      }
      CHECK(same);
    }
  }
}

TEST_CASE("episode rows: N+1 observations, episode_start, policy_state from zero") {
  struct Case {
    const char* env_id;
    const char* core;
    int layers;
    bool shared;
    int state_dim;
  };
  // state_dim: L*H (h) [+ L*H (c) for LSTM] [x2 with a separate critic core]; H = 8.
  for (const Case& k :
       {Case{"CartPole-v1", "lstm", 2, true, 32}, Case{"CartPoleNoVel-v1", "gru", 1, false, 16},
        Case{"Pendulum-v1", "lstm", 1, false, 32}}) {
    CAPTURE(k.env_id);
    CAPTURE(k.core);
    const SmallPolicy p = small_policy(k.env_id, k.core, k.layers, k.shared);
    rec::RecordConfig c = config_for(k.env_id, 2, 5);
    c.record_state = true;
    rec::Recorder recorder(c, p.spec, p.tensors);
    CHECK(recorder.state_dim() == k.state_dim);
    std::vector<rec::Episode> eps;
    const auto s = recorder.run([&](const rec::Episode& e) { eps.push_back(e); });
    REQUIRE(eps.size() == 2);
    CHECK(s.steps == eps[0].steps() + eps[1].steps());
    for (const auto& e : eps) {
      const auto n = static_cast<size_t>(e.steps());
      REQUIRE(n >= 2);
      CHECK(e.state_dim == k.state_dim);
      CHECK(e.observations.size() == (n + 1) * static_cast<size_t>(e.obs_dim));
      CHECK(e.actions.size() == n * static_cast<size_t>(e.action_dim));
      CHECK(e.terminations.size() == n);
      CHECK(e.truncations.size() == n);
      CHECK(e.episode_start.size() == n + 1);
      CHECK(e.episode_start[0] == 1);
      CHECK(std::count(e.episode_start.begin(), e.episode_start.end(), 1) == 1);
      CHECK((e.terminations.back() == 1 || e.truncations.back() == 1));
      REQUIRE(e.policy_state.size() == (n + 1) * static_cast<size_t>(k.state_dim));
      const auto row = [&](size_t t) {
        return std::span<const float>(e.policy_state)
            .subspan(t * static_cast<size_t>(k.state_dim), static_cast<size_t>(k.state_dim));
      };
      const auto zero = [](std::span<const float> r) {
        return std::all_of(r.begin(), r.end(), [](float x) { return x == 0.0f; });
      };
      CHECK(zero(row(0)));  // the zero initial state, even after an earlier episode
      for (size_t t = 1; t <= n; ++t) CHECK_FALSE(zero(row(t)));
    }
  }
}

TEST_CASE("a policy whose spaces do not fit the env is refused, naming both") {
  const SmallPolicy p = small_policy("CartPole-v1");
  CHECK_THROWS_WITH_AS(rec::Recorder(config_for("Pendulum-v1", 1, 0), p.spec, p.tensors),
                       doctest::Contains("does not fit env Pendulum-v1: the policy takes "
                                         "observations of size 4 and gives Discrete(2)"),
                       Error);
  CHECK_THROWS_AS(rec::Recorder(config_for("CartPol-v1", 1, 0)), Error);
  CHECK_THROWS_AS(rec::Recorder(config_for("CartPole-v1", 0, 0)), Error);
  rec::RecordConfig c = config_for("CartPole-v1", 1, 0);
  c.record_state = true;
  CHECK_THROWS_WITH_AS(rec::Recorder{c}, doctest::Contains("needs a policy"), Error);
}

TEST_CASE("videos: N+1 frames at the env's size and fps, none left behind by a failure") {
  const recur::test::TempDir tmp("recorder_video_test");
  const auto& dir = tmp.path;
  const SmallPolicy p = small_policy("CartPole-v1");
  rec::RecordConfig c = config_for("CartPole-v1", 3, 11);
  c.video_dir = (dir / "videos").string();
  c.video = rec::VideoSchedule::list("0,2");
  c.name_prefix = "test";
  rec::Recorder recorder(c, p.spec, p.tensors);
  std::vector<int> steps;
  const auto s = recorder.run([&](const rec::Episode& e) { steps.push_back(e.steps()); });
  REQUIRE(s.videos.size() == 2);
  CHECK(s.videos[0] == recorder.video_path(0));
  CHECK(s.videos[1] == recorder.video_path(2));
  for (size_t v = 0; v < 2; ++v) {
    const auto probe = rec::probe_video(s.videos[v]);
    CHECK(probe.width == 600);
    CHECK(probe.height == 400);
    CHECK(probe.fps == 50);
    CHECK(probe.frames == steps[v == 0 ? 0 : 2] + 1);
  }
  // A sink that fails on episode 1: the video of episode 0 and the directory it made go.
  c.video_dir = (dir / "failing").string();
  rec::Recorder failing(c, p.spec, p.tensors);
  int seen = 0;
  CHECK_THROWS_AS(failing.run([&](const rec::Episode&) {
    if (++seen == 2) throw Error("disk full");
  }),
                  Error);
  CHECK_FALSE(std::filesystem::exists(dir / "failing"));
}

// film_episode (agent/record/film.h): the evaluator's first episode in env 0, stochastic included
// (same reset seed, same action stream, one env), N+1 frames at the env's size and fps.
TEST_CASE("film_episode films the episode an evaluation of one env runs first") {
  const recur::test::TempDir tmp("film_test");
  for (const char* env_id : {"CartPole-v1", "Pendulum-v1"}) {
    CAPTURE(env_id);
    const SmallPolicy p = small_policy(env_id, "gru");
    for (const bool deterministic : {true, false}) {
      agent::EvalConfig e;
      e.env_id = env_id;
      e.episodes = 1;
      e.num_envs = 1;
      e.seed = 31;
      e.deterministic = deterministic;
      const agent::EvalResult r = agent::evaluate_policy(p.spec, p.tensors, e);
      const auto env = envs::make(env_id);
      const std::string path =
          (tmp.path / fmt::format("{}-{}.mp4", env_id, deterministic)).string();
      const double ret = rec::film_episode(*env, p.spec, p.tensors, 31, deterministic, path);
      CHECK(ret == doctest::Approx(r.returns[0]).epsilon(1e-6));
      const auto probe = rec::probe_video(path);
      CHECK(probe.frames == r.lengths[0] + 1);
      CHECK(probe.width == env->render_info().width);
      CHECK(probe.height == env->render_info().height);
    }
  }
  // record_eval_video is film_episode on a new env of the id, its directory created.
  const SmallPolicy p = small_policy("CartPole-v1");
  const std::string nested = (tmp.path / "a" / "b" / "v.mp4").string();
  const auto env = envs::make("CartPole-v1");
  const double a =
      rec::film_episode(*env, p.spec, p.tensors, 5, true, (tmp.path / "direct.mp4").string());
  CHECK(rec::record_eval_video(p.spec, p.tensors, "CartPole-v1", {}, 5, true, nested) == a);
  CHECK(rec::probe_video(nested).frames ==
        rec::probe_video((tmp.path / "direct.mp4").string()).frames);
  // A policy of other spaces is refused, and nothing is written.
  const SmallPolicy pendulum = small_policy("Pendulum-v1");
  const std::string refused = (tmp.path / "refused.mp4").string();
  CHECK_THROWS_WITH_AS(rec::film_episode(*env, pendulum.spec, pendulum.tensors, 0, true, refused),
                       doctest::Contains("does not fit env CartPole-v1"), Error);
  CHECK_FALSE(std::filesystem::exists(refused));
}

// Frames of odd size (a Gymnasium env's, through a FrameSource) lose their last column and row:
// VideoWriter's one rule, whatever films them.
TEST_CASE("film_episode on a batch with its own frames: odd sizes are cropped to even") {
  const recur::test::TempDir tmp("film_odd_test");
  const SmallPolicy p = small_policy("CartPole-v1");
  envs::VectorEnv batch("CartPole-v1", 1);
  envs::render::Frame frame;
  int calls = 0;
  const rec::FrameSource source = [&]() -> const envs::render::Frame& {
    frame = envs::render::Frame{47, 33,
                                std::vector<uint8_t>(47 * 33 * 3, static_cast<uint8_t>(calls++))};
    return frame;
  };
  const std::string path = (tmp.path / "odd.mp4").string();
  const double ret = rec::film_episode(batch, source, 15, p.spec, p.tensors, 3, true, path);
  const auto probe = rec::probe_video(path);
  CHECK(probe.width == 46);
  CHECK(probe.height == 32);
  CHECK(probe.fps == 15);
  CHECK(probe.frames == calls);
  CHECK(ret == doctest::Approx(static_cast<double>(calls - 1)));  // CartPole: 1 per step
  envs::VectorEnv two("CartPole-v1", 2);
  CHECK_THROWS_AS(rec::film_episode(two, source, 15, p.spec, p.tensors, 3, true, path),
                  std::invalid_argument);
}

TEST_CASE("run.video_every_evals films evaluations and leaves training unchanged") {
  const recur::test::TempDir tmp("train_video_test");
  const auto& dir = tmp.path;
  agent::TrainConfig c = recur::test::small_cartpole_job(dir.string());
  c.run.final_eval_episodes = 2;
  agent::TrainJobOptions plain_opts, video_opts;
  plain_opts.name = "plain";
  video_opts.name = "video";
  const auto plain = agent::run_train_job(c, agent::to_yaml(c), plain_opts);
  c.run.video_every_evals = 1;
  const auto filmed = agent::run_train_job(c, agent::to_yaml(c), video_opts);
  const auto read = [](const std::filesystem::path& p) {
    std::ifstream in(p);
    std::vector<std::string> rows;
    for (std::string line; std::getline(in, line);) rows.push_back(line);
    return rows;
  };
  CHECK(read(plain.run_dir / "eval.csv") == read(filmed.run_dir / "eval.csv"));
  CHECK(filmed.final_eval.returns == plain.final_eval.returns);
  const auto ckpt = [](const std::filesystem::path& run) {
    return recur::test::read_all(run / "checkpoints" / "latest.safetensors");
  };
  CHECK(ckpt(plain.run_dir) == ckpt(filmed.run_dir));  // same weights, bit for bit
  for (const char* name : {"rl-video-eval-1024.mp4", "rl-video-eval-2048.mp4"}) {
    CAPTURE(name);
    const auto path = filmed.run_dir / "videos" / name;
    REQUIRE(std::filesystem::exists(path));
    CHECK(rec::probe_video(path.string()).frames >= 2);
  }
  CHECK_FALSE(std::filesystem::exists(plain.run_dir / "videos"));
}

// Not asserted (timings vary by machine): where recording's time goes next to evaluation, and
// the frame rate of filming (render + encode on this thread).
TEST_CASE("recording throughput next to the evaluator (printed, not asserted)") {
  using Clock = std::chrono::steady_clock;
  const auto seconds = [](Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  agent::PolicyConfig pc;  // configs/cartpole.yaml's policy: LSTM 64, no encoder
  pc.encoder = {};
  pc.activation = "relu";
  const auto env = envs::make("Pendulum-v1");  // 200 steps per episode, whatever the policy
  const auto spec = agent::make_policy_spec(pc, env->observation_space(), env->action_space());
  Rng rng(3);
  const auto tensors = policy::init_policy(spec, rng);
  const int episodes = 50;
  std::string line;
  for (const int num_envs : {4, 1}) {
    agent::EvalConfig e;
    e.env_id = "Pendulum-v1";
    e.episodes = episodes;
    e.num_envs = num_envs;
    e.seed = 1;
    const auto t0 = Clock::now();
    agent::evaluate_policy(spec, tensors, e);
    line += fmt::format("evaluate_policy {} envs {:.1f} ms; ", num_envs, 1e3 * seconds(t0));
  }
  rec::RecordConfig c = config_for("Pendulum-v1", episodes, 1);
  {
    rec::Recorder recorder(c, spec, tensors);
    const auto t0 = Clock::now();
    recorder.run({});
    line += fmt::format("Recorder without a sink {:.1f} ms; ", 1e3 * seconds(t0));
  }
  const recur::test::TempDir tmp("recorder_speed_test");
  const auto& dir = tmp.path;
  {
    rec::Recorder recorder(c, spec, tensors);
    rec::DatasetInfo info;
    info.dataset_id = "recur/pendulum/speed-v0";
    info.env_id = "Pendulum-v1";
    info.observation_space = recorder.env().observation_space();
    info.action_space = recorder.env().action_space();
    const auto t0 = Clock::now();
    rec::MinariWriter writer(dir.string(), info);
    recorder.run([&](const rec::Episode& ep) { writer.add(ep); });
    writer.commit();
    line += fmt::format("Recorder + MinariWriter {:.1f} ms ({} steps)", 1e3 * seconds(t0),
                        writer.steps());
  }
  MESSAGE(line);
  // Filming: CartPole at 600x400, N+1 frames rendered and encoded.
  rec::Recorder cartpole(config_for("CartPole-v1", 1, 0));
  int frames = 0;
  const auto t0 = Clock::now();
  for (int i = 0; i < 5; ++i)
    frames += cartpole.record_episode(i, (dir / "v.mp4").string()).steps() + 1;
  const double filmed = seconds(t0);
  const auto t1 = Clock::now();
  for (int i = 0; i < 5; ++i) cartpole.record_episode(i);
  const double plain = seconds(t1);
  MESSAGE("filming CartPole-v1 600x400: " << frames << " frames in " << filmed
                                          << " s = " << frames / (filmed - plain)
                                          << " frames/s rendered + encoded (one thread)");
}
