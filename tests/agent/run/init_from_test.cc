// run.init_from: a trainer (or a training job) that starts from a trained policy holds that
// policy's weights and observation statistics before its first update, and says plainly when the
// checkpoint does not fit.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "agent/algorithm.h"
#include "agent/config/yaml.h"
#include "agent/ppo/trainer.h"
#include "agent/run/init_from.h"
#include "agent/train_job.h"
#include "policy/policy_checkpoint.h"
#include "tests/support/same_tensors.h"
#include "tests/support/temp_dir.h"
#include "tests/support/train_configs.h"

using namespace recur;

using test::check_same_tensors;

TEST_CASE("run.init_from loads a trained policy's weights and observation statistics") {
  test::TempDir dir("init_from");
  agent::TrainConfig c = test::small_cartpole_job(dir.path.string());
  c.run.eval_every = 0;
  c.run.final_eval_episodes = 1;
  c.run.tensorboard = false;
  const auto trained = agent::run_train_job(c, agent::to_yaml(c), {});
  // A run directory stands for its best checkpoint (here the final evaluation's weights).
  const auto best = trained.run_dir / "checkpoints" / "best.safetensors";
  REQUIRE(std::filesystem::exists(best));
  const policy::PolicyCheckpoint saved = policy::load_policy(best);

  SUBCASE("a trainer holds the checkpoint's tensors, a fresh one does not") {
    agent::TrainConfig from = c;
    from.run.seed = 7;  // another initialization, so equal tensors must come from the file
    from.run.init_from = trained.run_dir.string();
    agent::PpoTrainer fresh(from);
    const policy::TensorMap before = fresh.policy_tensors();
    int differ = 0;
    for (const auto& [name, t] : before) differ += t.data != saved.tensors.at(name).data;
    CHECK(differ > 2);  // weights (zero biases match) and the statistics
    CHECK(agent::start_from_policy(from, fresh) == best.string());
    policy::TensorMap expected;
    for (const auto& [name, t] : saved.tensors)
      if (!name.starts_with("optim.")) expected.emplace(name, t);
    check_same_tensors(fresh.policy_tensors(), expected);
    // The observation normalizer's count came too: it is not a fresh one's.
    CHECK(fresh.policy_tensors().at("obs_norm.count").data != before.at("obs_norm.count").data);
  }

  SUBCASE("the actor acts with the loaded weights too") {
    // One epoch of one minibatch: the update's KL is measured before its only step, between the
    // actor that collected the rollout and the learner, so it is ~0 only when both loaded.
    agent::TrainConfig from = c;
    from.run.seed = 7;
    from.algo.epochs = 1;
    from.algo.num_minibatches = 1;
    from.run.init_from = trained.run_dir.string();
    agent::PpoTrainer t(from);
    agent::start_from_policy(from, t);
    CHECK(t.iterate(nullptr).env_steps > 0);
    CHECK(t.last_update().approx_kl < 1e-6);
    CHECK(t.last_update().clip_fraction == 0);
  }

  SUBCASE("a training job records where it started") {
    agent::TrainConfig from = c;
    from.run.init_from = best.string();
    from.run.total_env_steps = 64;
    agent::TrainJobOptions o;
    o.name = "tuned";
    const auto tuned = agent::run_train_job(from, agent::to_yaml(from), o);
    const auto meta =
        policy::load_policy(tuned.run_dir / "checkpoints" / "latest.safetensors").metadata;
    CHECK(meta.at(agent::kMetaInitFrom) == best.string());
  }

  SUBCASE("empty: nothing loads") {
    agent::PpoTrainer t(c);
    const policy::TensorMap before = t.policy_tensors();
    CHECK(agent::start_from_policy(c, t).empty());
    check_same_tensors(t.policy_tensors(), before);
  }

  SUBCASE("a policy of other settings is refused, naming what differs") {
    agent::TrainConfig other = c;
    other.policy.hidden = 24;
    other.run.init_from = trained.run_dir.string();
    agent::PpoTrainer t(other);
    const std::string e = test::error_of([&] { agent::start_from_policy(other, t); });
    CHECK(e.find("run.init_from = ") != std::string::npos);
    CHECK(e.find("core.hidden: 24 here, 16 in the checkpoint") != std::string::npos);
    CHECK(e.find("drop run.init_from") != std::string::npos);
  }

  SUBCASE("settings that only initialize a fresh policy may differ; the weights replace them") {
    agent::TrainConfig other = c;
    other.policy.log_std_init = -1.5f;
    other.policy.forget_bias = 0.25f;
    other.policy.actor_gain = 1.0f;
    other.policy.critic_gain = 0.5f;
    other.policy.init = "pytorch";
    other.run.init_from = trained.run_dir.string();
    agent::PpoTrainer tuned(other);
    CHECK(agent::start_from_policy(other, tuned) == best.string());
    policy::TensorMap expected;
    for (const auto& [name, tensor] : saved.tensors)
      if (!name.starts_with("optim.")) expected.emplace(name, tensor);
    check_same_tensors(tuned.policy_tensors(), expected);
    // Beside a setting that changes the function, only that one is named.
    other.policy.hidden = 24;
    agent::PpoTrainer t24(other);
    const std::string e = test::error_of([&] { agent::start_from_policy(other, t24); });
    CHECK(e.find("core.hidden: 24 here, 16 in the checkpoint") != std::string::npos);
    CHECK(e.find("forget_bias") == std::string::npos);
    CHECK(e.find("actor_gain") == std::string::npos);
  }

  SUBCASE("a path that holds no checkpoint is named") {
    agent::TrainConfig other = c;
    other.run.init_from = (dir.path / "nothing_here").string();
    agent::PpoTrainer t(other);
    const std::string e = test::error_of([&] { agent::start_from_policy(other, t); });
    CHECK(e.find("run.init_from = " + other.run.init_from) != std::string::npos);
  }

  SUBCASE("the config key reads from YAML and --set") {
    const auto cfg = dir.path / "c.yaml";
    test::write_all(cfg, "env:\n  id: CartPole-v1\nrun:\n  init_from: runs/x\n");
    CHECK(agent::load_config(cfg, {}).run.init_from == "runs/x");
    CHECK(agent::load_config(cfg, {"run.init_from=runs/y"}).run.init_from == "runs/y");
  }
}
