// run.init_from for SAC and TD3: a new run starts from another run's latest learner state (actor,
// critics, targets, temperature unless reset) with fresh optimizers and an empty replay, and its
// warm-up acts with the loaded actor; what does not fit is refused by name. A resumed run refuses a
// run.init_from other than the one it started with.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "agent/algorithm.h"
#include "agent/config/yaml.h"
#include "agent/offpolicy/trainer.h"
#include "agent/run/init_from.h"
#include "agent/run/resume_point.h"
#include "agent/train_job.h"
#include "policy/policy_checkpoint.h"
#include "tests/support/same_tensors.h"
#include "tests/support/temp_dir.h"
#include "tests/support/train_configs.h"

using namespace recur;

namespace {

agent::TrainConfig small_td3(const std::string& dir) {
  agent::TrainConfig c;
  c.env.id = "PendulumNoVel-v1";
  c.env.num_envs = 2;
  c.env.normalize_obs = false;
  c.policy.encoder = {8};
  c.policy.head = {8};
  c.policy.hidden = 8;
  c.algo.type = "td3";  // target actor and critics: every learner tensor kind
  c.offpolicy.buffer_size = 1000;
  c.offpolicy.batch_size = 4;
  c.offpolicy.seq_len = 4;
  c.offpolicy.stored_state = true;
  c.offpolicy.burn_in = 2;
  c.offpolicy.learning_starts = 50;
  c.offpolicy.steps_per_iteration = 100;
  c.run.total_env_steps = 300;
  c.run.eval_every = 0;
  c.run.final_eval_episodes = 1;
  c.run.tensorboard = false;
  c.run.output_dir = dir;
  return c;
}

std::unique_ptr<agent::offpolicy::OffPolicyTrainer> trainer(const agent::TrainConfig& c) {
  return std::make_unique<agent::offpolicy::OffPolicyTrainer>(c, nullptr);
}

policy::TensorMap with_prefix(const policy::TensorMap& all, const std::string& prefix) {
  policy::TensorMap out;
  for (const auto& [name, t] : all)
    if (name.starts_with(prefix)) out.emplace(name, t);
  return out;
}

}  // namespace

TEST_CASE("run.init_from starts TD3 from a run's latest learner state") {
  test::TempDir dir("init_from_offpolicy");
  const agent::TrainConfig c = small_td3(dir.path.string());
  agent::TrainJobOptions o;
  o.name = "source";
  const auto source = agent::run_train_job(c, agent::to_yaml(c), o).run_dir;
  const agent::RunDir source_dir = agent::RunDir::open(source);
  const agent::ResumePoint point = agent::read_resume_point(source_dir, "");
  const policy::TensorMap saved = agent::load_trainer_tensors(source_dir, point.state);

  agent::TrainConfig from = c;
  from.run.seed = 7;  // another initialization: equal tensors must come from the run
  from.run.init_from = source.string();

  SUBCASE("the learned parameters load; optimizers, replay and counters stay fresh") {
    auto fresh = trainer(from);
    const policy::TensorMap fresh_state = fresh->learner().state_tensors();
    auto t = trainer(from);
    CHECK(agent::start_from_policy(from, *t) == source.string());
    const policy::TensorMap loaded = t->learner().state_tensors();
    const policy::TensorMap params = t->learner().parameter_tensors();
    int differ = 0;
    for (const auto& [name, p] : params) {
      INFO(name);
      CHECK(p.data == saved.at(name).data);
      differ += p.data != fresh_state.at(name).data;
    }
    CHECK(differ > 10);  // the run's weights, not a fresh initialization's
    CHECK(!with_prefix(params, "target.actor.").empty());  // TD3's target actor
    CHECK(!with_prefix(params, "target.q1.").empty());
    for (const char* optim : {"actor_optim.", "critic_optim.", "alpha_optim."})
      test::check_same_tensors(with_prefix(loaded, optim), with_prefix(fresh_state, optim));
    // The acting policy got the weights too: it equals the run's latest checkpoint.
    policy::TensorMap latest;
    for (const auto& [name, tensor] : point.checkpoint.tensors)
      if (!name.starts_with("optim.")) latest.emplace(name, tensor);
    test::check_same_tensors(t->policy_tensors(), latest);
    CHECK(t->env_steps() == 0);
    CHECK(t->replay().size() == 0);
  }

  SUBCASE("the warm-up acts with the loaded actor, not uniformly") {
    // One vector step each: with learning_starts 0 the actor acts; a warm-up of 1000 steps acts
    // the same only when it uses the actor (uniform actions would differ).
    from.offpolicy.steps_per_iteration = from.env.num_envs;
    agent::TrainConfig no_warmup = from;
    no_warmup.offpolicy.learning_starts = 0;
    from.offpolicy.learning_starts = 1000;
    auto a = trainer(from), b = trainer(no_warmup);
    agent::start_from_policy(from, *a);
    agent::start_from_policy(no_warmup, *b);
    a->iterate(nullptr);
    b->iterate(nullptr);
    const auto replay_a = with_prefix(a->save_state().tensors, "replay.");
    REQUIRE(!replay_a.empty());
    test::check_same_tensors(replay_a, with_prefix(b->save_state().tensors, "replay."));
    // A fresh run's warm-up is uniform: its first actions are not the actor's.
    agent::TrainConfig fresh_warmup = from, fresh_actor = no_warmup;
    fresh_warmup.run.init_from.clear();
    fresh_actor.run.init_from.clear();
    auto f = trainer(fresh_warmup), g = trainer(fresh_actor);
    f->iterate(nullptr);
    g->iterate(nullptr);
    CHECK(with_prefix(f->save_state().tensors, "replay.actions") !=
          with_prefix(g->save_state().tensors, "replay.actions"));
  }

  SUBCASE("a training job runs from it and records it") {
    from.run.total_env_steps = 100;
    agent::TrainJobOptions tuned;
    tuned.name = "tuned";
    const auto run = agent::run_train_job(from, agent::to_yaml(from), tuned).run_dir;
    const auto meta = policy::load_policy(run / "checkpoints" / "latest.safetensors").metadata;
    CHECK(meta.at(agent::kMetaInitFrom) == source.string());
    // Resuming it with another run.init_from is refused; with its own it is not checked away.
    agent::TrainConfig other = from;
    other.run.init_from = (dir.path / "elsewhere").string();
    agent::TrainJobOptions resume;
    resume.resume_dir = run;
    const std::string e =
        test::error_of([&] { agent::run_train_job(other, agent::to_yaml(other), resume); });
    CHECK(e.find("run.init_from = " + other.run.init_from) != std::string::npos);
    CHECK(e.find("started from " + source.string()) != std::string::npos);
    CHECK(e.find("drop --set run.init_from") != std::string::npos);
  }

  SUBCASE("a checkpoint file is refused: it holds the actor alone") {
    from.run.init_from = (source / "checkpoints" / "latest.safetensors").string();
    auto t = trainer(from);
    const std::string e = test::error_of([&] { agent::start_from_policy(from, *t); });
    CHECK(e.find("algo.type td3 starts from a run directory") != std::string::npos);
    CHECK(e.find("a checkpoint file, which holds the actor alone") != std::string::npos);
  }

  SUBCASE("a run of another algo.type is refused") {
    from.algo.type = "sac";
    auto t = trainer(from);
    const std::string e = test::error_of([&] { agent::start_from_policy(from, *t); });
    CHECK(e.find("run.init_from = " + source.string()) != std::string::npos);
    CHECK(e.find("a run of algo.type td3 and this run is algo.type sac") != std::string::npos);
  }

  SUBCASE("a policy of other settings is refused, naming what differs") {
    from.policy.hidden = 12;
    auto t = trainer(from);
    const std::string e = test::error_of([&] { agent::start_from_policy(from, *t); });
    CHECK(e.find("core.hidden: 12 here, 8 in the checkpoint") != std::string::npos);
  }

  SUBCASE("a fine-tune may explore with other noise: the run's weights load under it") {
    from.offpolicy.exploration_noise = 0.3f;
    auto t = trainer(from);
    CHECK(agent::start_from_policy(from, *t) == source.string());
    CHECK(t->spec().exploration_noise == 0.3f);
    for (const auto& [name, p] : t->learner().parameter_tensors()) {
      INFO(name);
      CHECK(p.data == saved.at(name).data);
    }
  }

  SUBCASE("a PPO run is refused: it has no critics to load") {
    agent::TrainConfig ppo = test::small_cartpole_job(dir.path.string());
    ppo.run.eval_every = 0;
    ppo.run.final_eval_episodes = 1;
    ppo.run.tensorboard = false;
    ppo.run.total_env_steps = 128;
    ppo.env.id = c.env.id;
    ppo.env.normalize_obs = false;
    ppo.policy = c.policy;
    const auto ppo_run = agent::run_train_job(ppo, agent::to_yaml(ppo), {}).run_dir;
    from.run.init_from = ppo_run.string();
    auto t = trainer(from);
    const std::string e = test::error_of([&] { agent::start_from_policy(from, *t); });
    CHECK(e.find("run.init_from = " + ppo_run.string()) != std::string::npos);
    CHECK(e.find("a run of algo.type ppo and this run is algo.type td3") != std::string::npos);
  }

  SUBCASE("a directory that is no run is named") {
    from.run.init_from = dir.path.string();
    auto t = trainer(from);
    const std::string e = test::error_of([&] { agent::start_from_policy(from, *t); });
    CHECK(e.find("run.init_from = " + dir.path.string()) != std::string::npos);
  }
}

TEST_CASE("run.init_from and SAC's temperature: loaded, reset, or this run's fixed value") {
  test::TempDir dir("init_from_sac_alpha");
  agent::TrainConfig c = small_td3(dir.path.string());
  c.algo.type = "sac";
  agent::TrainJobOptions o;
  o.name = "source";
  const auto source = agent::run_train_job(c, agent::to_yaml(c), o).run_dir;
  const agent::RunDir source_dir = agent::RunDir::open(source);
  const policy::TensorMap saved =
      agent::load_trainer_tensors(source_dir, agent::read_resume_point(source_dir, "").state);
  const float learned = saved.at("log_alpha").data.at(0);
  REQUIRE(learned != 0.0f);  // 250 updates moved it from log(init_alpha = 1)

  agent::TrainConfig from = c;
  from.run.init_from = source.string();
  from.offpolicy.init_alpha = 0.05f;
  const auto log_alpha = [&](const agent::TrainConfig& cfg) {
    auto t = trainer(cfg);
    agent::start_from_policy(cfg, *t);
    // Everything but the temperature is the run's, whichever case.
    for (const auto& [name, p] : t->learner().parameter_tensors()) {
      INFO(name);
      if (name != "log_alpha") CHECK(p.data == saved.at(name).data);
    }
    return t->learner().parameter_tensors().at("log_alpha").data.at(0);
  };
  SUBCASE("by default the learned temperature goes on") {
    CHECK(log_alpha(from) == learned);
  }
  SUBCASE("offpolicy.reset_alpha starts it at init_alpha") {
    from.offpolicy.reset_alpha = true;
    CHECK(log_alpha(from) == doctest::Approx(std::log(0.05)).epsilon(1e-6));
  }
  SUBCASE("a fixed temperature (auto_alpha false) is this run's init_alpha") {
    from.offpolicy.auto_alpha = false;
    CHECK(log_alpha(from) == doctest::Approx(std::log(0.05)).epsilon(1e-6));
  }
}
