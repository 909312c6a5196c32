#include "agent/config/yaml.h"

#include <unistd.h>

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "agent/ppo/trainer.h"
#include "core/error.h"
#include "envs/registry.h"

namespace {

namespace fs = std::filesystem;
using recur::agent::load_config;
using recur::agent::TrainConfig;

// A config file under the temp directory, removed when the test ends.
class TempConfig {
 public:
  TempConfig(const std::string& name, const std::string& text)
      // A directory per process: ctest runs test cases in parallel processes.
      : path_(fs::temp_directory_path() / ("recur_config_test." + std::to_string(::getpid())) /
              ("recur_config_test_" + name + ".yaml")) {
    fs::create_directories(path_.parent_path());
    std::ofstream(path_) << text;
  }
  ~TempConfig() {
    std::error_code ec;
    fs::remove(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// The message of the recur::Error that loading throws ("" if none).
std::string load_error(const std::string& text, const std::vector<std::string>& overrides = {}) {
  const TempConfig file("error", text);
  try {
    load_config(file.path(), overrides);
  } catch (const recur::Error& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& message, const std::string& fragment) {
  if (message.find(fragment) != std::string::npos) return true;
  MESSAGE("'" << fragment << "' not in: " << message);
  return false;
}

const char* kExample = R"(# A CartPole job.
env:
  id: CartPole-v1
  num_envs: 16
  options:
    max_episode_steps: 200
    label: "two words"
policy:
  encoder: [128, 64]
  activation: relu
  core: gru
algo:
  learning_rate: 3e-4
  lr_schedule: constant
  gamma: 0.98
  num_minibatches: 8
run:
  total_env_steps: 1e5
  seed: 7
  name: "my run: one"
device:
  learner: auto
)";

}  // namespace

TEST_CASE("config loads a file onto the defaults") {
  const TempConfig file("example", kExample);
  const TrainConfig c = load_config(file.path(), {});
  CHECK(c.env.id == "CartPole-v1");
  CHECK(c.env.num_envs == 16);
  CHECK(c.env.options.at("max_episode_steps") == "200");
  CHECK(c.env.options.at("label") == "two words");
  CHECK(c.env.options_source == file.path().string() + ":5");
  CHECK(c.policy.encoder == std::vector<int>{128, 64});
  CHECK(c.policy.core == "gru");
  CHECK(c.algo.learning_rate == 3e-4f);
  CHECK(c.algo.gamma == 0.98f);
  CHECK(c.run.total_env_steps == 100000);
  CHECK(c.run.seed == 7);
  CHECK(c.run.name == "my run: one");
  CHECK(c.device.learner == "auto");
  // Untouched keys keep their defaults.
  CHECK(c.algo.epochs == recur::agent::AlgoConfig{}.epochs);
  CHECK(c.policy.hidden == recur::agent::PolicyConfig{}.hidden);
}

TEST_CASE("config round trip through to_yaml gives an equal config") {
  const TempConfig file("example", kExample);
  const TrainConfig c = load_config(file.path(), {"algo.clip_range=0.1234567"});
  const std::string written = recur::agent::to_yaml(c);
  const TempConfig again("written", written);
  const TrainConfig back = load_config(again.path(), {});
  CHECK(back == c);
  CHECK(recur::agent::to_yaml(back) == written);

  // Defaults too: every key is written, and an empty file means all defaults.
  const TempConfig empty("empty", "");
  CHECK(load_config(empty.path(), {}) == TrainConfig{});
  const TempConfig defaults("defaults", recur::agent::to_yaml(TrainConfig{}));
  CHECK(load_config(defaults.path(), {}) == TrainConfig{});
  CHECK(has(written, "  adam_eps: "));
  CHECK(has(written, "  options: {"));
  CHECK(has(written, "  target_return: null"));

  // An optional number: set, then back to null by an override.
  const TrainConfig t = load_config(file.path(), {"run.target_return=-150.5"});
  REQUIRE(t.run.target_return);
  CHECK(*t.run.target_return == -150.5f);
  const TempConfig t_file("target", recur::agent::to_yaml(t));
  CHECK(load_config(t_file.path(), {}) == t);
  CHECK(!load_config(t_file.path(), {"run.target_return=null"}).run.target_return);
}

TEST_CASE("config overrides apply after the file in order") {
  const TempConfig file("example", kExample);
  const TrainConfig c =
      load_config(file.path(), {"policy.encoder=[64,64,32]", "env.options.g=9.81", "algo.gamma=0.9",
                                "algo.gamma=0.95", "run.name=", "policy.shared_core=true",
                                "env.id=Pendulum-v1"});
  CHECK(c.policy.encoder == std::vector<int>{64, 64, 32});
  CHECK(c.env.options.at("g") == "9.81");
  CHECK(c.env.options.at("max_episode_steps") == "200");
  CHECK(c.env.options_source == file.path().string() + ":5 and --set");
  CHECK(c.algo.gamma == 0.95f);
  CHECK(c.run.name.empty());
  CHECK(c.policy.shared_core);
  CHECK(c.env.id == "Pendulum-v1");
  const TrainConfig none = load_config(file.path(), {"policy.encoder=[]"});
  CHECK(none.policy.encoder.empty());
}

TEST_CASE("config YAML syntax error names the file and line") {
  const std::string msg = load_error("env:\n  num_envs: 4\npolicy:\n  encoder: [64,\n");
  CHECK(has(msg, "recur_config_test_error.yaml:"));
  CHECK(has(msg, "YAML syntax error"));
  const std::string tab = load_error("algo:\n  gamma: 0.9\n   epochs: 3\n");
  CHECK(has(tab, "recur_config_test_error.yaml:3:"));
}

TEST_CASE("config unknown section is named with a suggestion") {
  const std::string msg = load_error("env:\n  num_envs: 4\npolcy:\n  hidden: 32\n");
  CHECK(has(msg, ".yaml:3: unknown section 'polcy'"));
  CHECK(has(msg, "Did you mean 'policy'?"));
  CHECK(has(msg, "env, policy, algo, offpolicy, run, device"));
  const std::string misplaced = load_error("num_envs: 4\n");
  CHECK(has(misplaced, "did you mean 'env.num_envs'?"));
}

TEST_CASE("config unknown key is named with a suggestion and the section's keys") {
  const std::string msg = load_error("algo:\n  gamma: 0.9\n  learning_rat: 0.001\n");
  CHECK(has(msg, ".yaml:3: unknown key 'algo.learning_rat'"));
  CHECK(has(msg, "Did you mean 'algo.learning_rate'?"));
  CHECK(has(msg, "Keys in section algo: type, rollout_steps"));
  const std::string other = load_error("algo:\n  num_envs: 4\n");
  CHECK(has(other, "Did you mean 'env.num_envs'?"));
  const std::string twice = load_error("algo:\n  gamma: 0.9\n  gamma: 0.8\n");
  CHECK(has(twice, ".yaml:3: key 'algo.gamma' is given twice"));
}

TEST_CASE("config wrong types name the key the value and the expected type") {
  const std::string word = load_error("env:\n  num_envs: eight\n");
  CHECK(has(word, ".yaml:2: env.num_envs = 'eight' is not an integer"));
  const std::string list = load_error("algo:\n  gamma: [0.9]\n");
  CHECK(has(list, ".yaml:2: algo.gamma = [0.9] is a list, not a number"));
  const std::string quoted = load_error("run:\n  seed: \"3\"\n");
  CHECK(has(quoted, "run.seed = '3' is quoted text, not a non-negative integer"));
  const std::string fraction = load_error("algo:\n  epochs: 2.5\n");
  CHECK(has(fraction, "algo.epochs = '2.5' is not an integer"));
  const std::string flag = load_error("env:\n  normalize_obs: maybe\n");
  CHECK(has(flag, "env.normalize_obs = 'maybe' is not true or false"));
  const std::string encoder = load_error("policy:\n  encoder: 64\n");
  CHECK(has(encoder, "policy.encoder = '64' is not a list of integers"));
  const std::string element = load_error("policy:\n  encoder: [64, wide]\n");
  CHECK(has(element, "element 2 ('wide') is not an integer"));
  const std::string option = load_error("env:\n  options:\n    g: [1, 2]\n");
  CHECK(has(option, "env.options.g = [1, 2]: env options take single values"));
  const std::string section = load_error("algo: 3\n");
  CHECK(has(section, "section 'algo' is '3'"));
  const std::string empty = load_error("algo:\n  gamma:\n");
  CHECK(has(empty, "algo.gamma = (nothing) is empty, not a number"));
}

TEST_CASE("config out of range values name the key the value and the range") {
  const std::string gamma = load_error("algo:\n  gamma: 1.5\n");
  CHECK(has(gamma, ".yaml:2: algo.gamma = 1.5 is out of range: it must be in (0, 1]"));
  const std::string envs = load_error("env:\n  num_envs: 0\n");
  CHECK(has(envs, ".yaml:2: env.num_envs = 0 is out of range: it must be >= 1"));
  const std::string layers = load_error("policy:\n  layers: 17\n");
  CHECK(has(layers, "policy.layers = 17 is out of range: it must be in [1, 16]"));
  const std::string core = load_error("policy:\n  core: lstn\n");
  CHECK(has(core, "policy.core = 'lstn' is not allowed: it must be one of lstm, gru"));
  CHECK(has(core, "Did you mean 'lstm'?"));
  const std::string device = load_error("device:\n  actor: gpu\n");
  CHECK(has(device, "device.actor = 'gpu' is not allowed"));
  const std::string target = load_error("run:\n  target_return: high\n");
  CHECK(has(target, "run.target_return"));
  CHECK(has(target, "a number or null"));
  const std::string stop = load_error("run:\n  stop_at_target: true\n  eval_every: 0\n");
  CHECK(has(stop, "run.stop_at_target = true stops at a periodic evaluation"));
  const std::string io = load_error("device:\n  actor_io: zero\n");
  CHECK(has(io, "device.actor_io = 'zero' is not allowed: it must be one of copy, mapped"));
  const std::string width = load_error("policy:\n  encoder: [64, 0]\n");
  CHECK(has(width, "policy.encoder = [64, 0] is out of range"));
  const std::string steps = load_error("run:\n  total_env_steps: 100\n");
  CHECK(has(steps, ".yaml:2: run.total_env_steps = 100 is less than one update"));
  CHECK(has(steps, "8 * 32 = 256"));
}

TEST_CASE("config run.eval_threads: 1 by default, 1 to 256") {
  CHECK(recur::agent::RunConfig{}.eval_threads == 1);
  const std::string zero = load_error("run:\n  eval_threads: 0\n");
  CHECK(has(zero, ".yaml:2: run.eval_threads = 0 is out of range: it must be 1 to 256"));
  CHECK(has(load_error("run:\n  eval_threads: 257\n"), "run.eval_threads = 257 is out of range"));
}

TEST_CASE("config run.eval_nice: a Linux nice value, 19 by default") {
  CHECK(recur::agent::RunConfig{}.eval_nice == 19);
  const std::string high = load_error("run:\n  eval_nice: 20\n");
  CHECK(has(high, ".yaml:2: run.eval_nice = 20 is out of range: it must be 0 to 19"));
  const std::string negative = load_error("run:\n  eval_nice: -1\n");
  CHECK(has(negative, "run.eval_nice = -1 is out of range"));
}

TEST_CASE("config device.tower_streams: 1 or 2") {
  const std::string three = load_error("device:\n  tower_streams: 3\n");
  CHECK(has(three, ".yaml:2: device.tower_streams = 3 is out of range: it must be 1 or 2"));
  const std::string zero = load_error("device:\n  tower_streams: 0\n");
  CHECK(has(zero, "device.tower_streams = 0 is out of range"));
}

TEST_CASE("config device.cudnn_data: fp32, fp16 or bf16, cuDNN's cores, fma math beside it") {
  const std::string bad = load_error("device:\n  cudnn_data: fp8\n");
  CHECK(has(bad,
            ".yaml:2: device.cudnn_data = 'fp8' is not allowed: it must be one of fp32, "
            "fp16, bf16"));
  CHECK(load_error("device:\n  cudnn_data: bf16\n").empty());
  CHECK(load_error("device:\n  cudnn_data: fp16\npolicy:\n  core: gru\n").empty());
  const std::string math = load_error("device:\n  cudnn_data: bf16\n  cudnn_math: tf32\n");
  CHECK(has(math,
            ".yaml:3: device.cudnn_math = 'tf32' is out of range: it must be fma (the "
            "default) when device.cudnn_data is fp16 or bf16"));
  const std::string core = load_error("device:\n  cudnn_data: fp16\npolicy:\n  core: mingru\n");
  CHECK(has(core,
            ".yaml:2: device.cudnn_data = 'fp16' is out of range: it must be fp32 with "
            "policy.core mingru (16-bit data is cuDNN's"));
  // fp16 needs PPO's dynamic loss scale; SAC and TD3 take bf16.
  const std::string sac =
      load_error("device:\n  cudnn_data: fp16\nenv:\n  normalize_obs: false\nalgo:\n  type: sac\n");
  CHECK(has(sac,
            "device.cudnn_data = 'fp16' is out of range: it must be bf16 or fp32 with algo.type "
            "sac (fp16 gradients need the dynamic loss scale of PPO's updater)"));
  CHECK(load_error("device:\n  cudnn_data: bf16\nenv:\n  normalize_obs: false\nalgo:\n  type: "
                   "sac\n")
            .empty());
}

TEST_CASE("config env.groups: 1 or 2, PPO only, not with DD-PPO's preemption") {
  const std::string three = load_error("env:\n  groups: 3\n");
  CHECK(
      has(three,
          ".yaml:2: env.groups = 3 is out of range: it must be 1 (every env steps at once) or 2"));
  const std::string more =
      load_error("env:\n  num_envs: 1\n  groups: 2\nalgo:\n  num_minibatches: 1\n");
  CHECK(has(more, "env.groups = 2 is out of range: it must be <= env.num_envs = 1"));
  const std::string sac =
      load_error("env:\n  groups: 2\n  normalize_obs: false\nalgo:\n  type: sac\n");
  CHECK(has(sac, "env.groups = 2 is out of range: it must be 1 with algo.type: sac"));
  const std::string preempt = load_error("env:\n  groups: 2\ndist:\n  sync_frac: 0.6\n");
  CHECK(has(preempt, "cannot be combined with env.groups = 2"));
  CHECK(has(preempt, "dist.sync_frac: 0 or env.groups: 1"));
}

TEST_CASE("config incompatible num_envs and num_minibatches names both keys") {
  const std::string msg = load_error("env:\n  num_envs: 6\n");
  CHECK(has(msg,
            ".yaml:2: env.num_envs = 6 is not a multiple of algo.num_minibatches = 4 "
            "(the default)"));
  CHECK(has(msg, "one of 1, 2, 3, 6"));
  const std::string clip = load_error("policy:\n  core: gru\n  cell_clip: 3\n");
  CHECK(has(clip, ".yaml:3: policy.cell_clip = 3 clips LSTM cell states"));
  CHECK(has(clip, "policy.core = 'gru' ("));
}

TEST_CASE("config algo.bptt_steps: a divisor of rollout_steps, minibatches of its sequences") {
  const std::string odd = load_error("algo:\n  bptt_steps: 5\n");
  CHECK(has(odd, ".yaml:2: algo.bptt_steps = 5 is out of range"));
  CHECK(has(odd, "0 (whole rollouts) or a divisor of algo.rollout_steps = 32"));
  // 8 envs x 32 / 8 = 32 sequences: 3 minibatches do not divide them, 16 would.
  const std::string mb = load_error("algo:\n  bptt_steps: 8\n  num_minibatches: 3\n");
  CHECK(has(mb, "algo.num_minibatches = 3"));
  CHECK(has(mb, "does not divide the 32 training sequences"));
  CHECK(has(mb, "one of 1, 2, 4, 8, 16, 32"));
  const std::string dist = load_error("algo:\n  bptt_steps: 8\ndist:\n  sync_frac: 0.6\n");
  CHECK(has(dist, "cannot be combined with algo.bptt_steps = 8"));
}

TEST_CASE("config bad --set syntax and unknown --set keys are named") {
  const std::string no_eq = load_error("", {"algo.gamma"});
  CHECK(has(no_eq, "--set 'algo.gamma' has no '='"));
  const std::string no_dot = load_error("", {"gamma=0.9"});
  CHECK(has(no_dot, "--set 'gamma=0.9': 'gamma' is not a section.key path"));
  const std::string bad_yaml = load_error("", {"policy.encoder=[64,"});
  CHECK(has(bad_yaml, "the value '[64,' is not valid YAML"));
  const std::string key = load_error("", {"algo.learning_rat=0.1"});
  CHECK(has(key, "--set: unknown key 'algo.learning_rat'. Did you mean 'algo.learning_rate'?"));
  const std::string section = load_error("", {"agl.gamma=0.9"});
  CHECK(has(section, "--set: unknown section 'agl'"));
  const std::string type = load_error("", {"env.num_envs=[4]"});
  CHECK(has(type, "--set: env.num_envs = [4] is a list, not an integer"));
  const std::string range = load_error("", {"algo.gamma=0"});
  CHECK(has(range, "--set: algo.gamma = 0 is out of range"));
}

TEST_CASE("config an empty env.plugin path is named, in the file and with --set") {
  // Found by tools/fuzz/config_fuzzer: std::filesystem::absolute("") threw a filesystem_error.
  CHECK(has(load_error("", {"env.plugin="}), "--set: env.plugin holds an empty path"));
  CHECK(has(load_error("", {"env.plugin=[a.so, '']"}), "item 2 is '', but each item is a path"));
  CHECK(has(load_error("env:\n  plugin: ''\n"), ".yaml:2: env.plugin holds an empty path"));
}

TEST_CASE("config validate works on configs built in code") {
  TrainConfig c;
  CHECK_NOTHROW(recur::agent::validate(c));
  c.algo.learning_rate = 0;
  try {
    recur::agent::validate(c);
    FAIL("no error");
  } catch (const recur::Error& e) {
    CHECK(has(e.what(), "algo.learning_rate = 0 is out of range: it must be > 0"));
  }
  c = TrainConfig{};
  c.algo.type = "a2c";
  CHECK_THROWS_AS(recur::agent::validate(c), recur::Error);
}

TEST_CASE("config missing file is named") {
  try {
    load_config(fs::temp_directory_path() / "recur_no_such_config.yaml", {});
    FAIL("no error");
  } catch (const recur::Error& e) {
    CHECK(has(e.what(), "recur_no_such_config.yaml' does not exist"));
  }
}

TEST_CASE("every shipped config loads, validates and builds its trainer") {
  // configs/ beside tests/data (RECUR_TEST_DATA_DIR overrides the compiled-in folder on device
  // machines, where the source tree lies elsewhere).
  const char* data_env = std::getenv("RECUR_TEST_DATA_DIR");
  const auto dir =
      fs::path(data_env && *data_env ? data_env : RECUR_TEST_DATA_DIR) / ".." / ".." / "configs";
  int n = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    CAPTURE(entry.path().string());
    const recur::agent::TrainConfig c = load_config(entry.path(), {});
    // A config for a plugin's env (configs/tmaze.yaml) says how to name the plugin; its trainer
    // is built by the plugin's own tests (tests/envs/plugins/tmaze: plugin.tmaze_train), which
    // build it.
    if (recur::envs::registry().find(c.env.id) == nullptr && c.env.plugin.empty()) {
      std::ifstream in(entry.path());
      const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
      CHECK_MESSAGE(has(text, "env.plugin="), "unknown env id and no word on its plugin");
      continue;
    }
    // The trainer makes the envs and the policy: an env id or option the registry refuses, or a
    // policy the spaces cannot take, fails here.
    CHECK_NOTHROW(recur::agent::PpoTrainer{c});
    ++n;
  }
  CHECK(n >= 10);
}
