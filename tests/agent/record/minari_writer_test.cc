// Minari datasets as Minari 0.5 writes them, read back through HDF5 (the wrapper and the plain C
// API) and metadata.json; refusals (existing id, bad id, unwritable root) and atomicity.
//
// RECUR_KEEP_MINARI_DATASET=<dir>: the CartPole test case writes its dataset under <dir> and
// keeps it, for a check with Python (minari.MinariDataset("<dir>/recur/cartpole/random-v0/data")).
#include "agent/record/minari_writer.h"

#include <doctest/doctest.h>
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "agent/record/hdf5.h"
#include "agent/record/space_json.h"
#include "core/error.h"
#include "core/rng.h"
#include "envs/registry.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using namespace recur;
using namespace recur::agent::record;

using recur::test::error_of;
using recur::test::read_all;
using recur::test::TempDir;
using recur::test::write_all;

namespace {

const float kInf = std::numeric_limits<float>::infinity();

DatasetInfo cartpole_info(const std::string& id) {
  DatasetInfo info;
  info.dataset_id = id;
  info.env_id = "CartPole-v1";
  info.observation_space =
      envs::Space::box({-4.8f, -kInf, -0.41887903f, -kInf}, {4.8f, kInf, 0.41887903f, kInf});
  info.action_space = envs::Space::discrete(2);
  info.max_episode_steps = 500;
  info.reward_threshold = 475.0;
  info.env_entry_point = gymnasium_entry_point("CartPole-v1");
  info.algorithm_name = "recur-test";
  info.author = "recur tests";
  info.description = "synthetic \"episodes\"";
  info.code_permalink = "https://example.org/recur";
  return info;
}

// A synthetic episode: values encode (episode, row, column) so that reads can be checked.
Episode synthetic_episode(int index, int steps, int obs_dim, int action_dim, int state_dim,
                          bool discrete, bool terminated) {
  Episode ep;
  ep.seed = 1000 + static_cast<uint64_t>(index);
  ep.obs_dim = obs_dim;
  ep.action_dim = action_dim;
  ep.state_dim = state_dim;
  for (int t = 0; t <= steps; ++t)
    for (int j = 0; j < obs_dim; ++j)
      ep.observations.push_back(static_cast<float>(index * 100.0 + t + 0.125 * j));
  for (int t = 0; t < steps; ++t) {
    for (int j = 0; j < action_dim; ++j)
      ep.actions.push_back(static_cast<float>(discrete ? (t + index) % 2 : 0.5 * t - j));
    ep.rewards.push_back(1.0 + 0.5 * t);
    ep.terminations.push_back(terminated && t == steps - 1);
    ep.truncations.push_back(!terminated && t == steps - 1);
  }
  ep.episode_start.assign(static_cast<size_t>(steps) + 1, 0);
  ep.episode_start[0] = 1;
  for (int t = 0; t <= steps; ++t)
    for (int j = 0; j < state_dim; ++j)
      ep.policy_state.push_back(static_cast<float>(-1.0 * t - 0.25 * j));
  return ep;
}

}  // namespace

TEST_CASE("minari: dataset ids follow Minari's grammar") {
  CHECK_NOTHROW(check_dataset_id("recur/cartpole/ppo-lstm-v0"));
  CHECK_NOTHROW(check_dataset_id("cartpole-random-v12"));
  CHECK_NOTHROW(check_dataset_id("D4RL/door/human-v2"));
  CHECK_NOTHROW(check_dataset_id("ns/name_with_underscores-v0"));
  const std::string e = error_of([] { check_dataset_id("recur/cartpole/ppo-lstm"); });
  CHECK(e.find("-vN") != std::string::npos);
  CHECK(e.find("(namespace/)(env_name/)name-vN") != std::string::npos);
  CHECK(e.find("recur/cartpole/ppo-lstm-v0") != std::string::npos);
  CHECK_THROWS_AS(check_dataset_id(""), recur::Error);
  CHECK_THROWS_AS(check_dataset_id("a b-v0"), recur::Error);
  CHECK_THROWS_AS(check_dataset_id("/abs/name-v0"), recur::Error);
  CHECK_THROWS_AS(check_dataset_id("ns//name-v0"), recur::Error);
  CHECK_THROWS_AS(check_dataset_id("../name-v0"), recur::Error);
  CHECK_THROWS_AS(check_dataset_id("ns/-v0"), recur::Error);
  CHECK_THROWS_AS(check_dataset_id("x/name-v0"), recur::Error);  // Minari: namespace >= 2 chars
  CHECK_THROWS_AS(check_dataset_id("name-vx"), recur::Error);
}

TEST_CASE("minari: default datasets root") {
  const char* old = std::getenv("MINARI_DATASETS_PATH");
  const std::string saved = old ? old : "";
  ::setenv("MINARI_DATASETS_PATH", "/some/where", 1);
  CHECK(default_datasets_root() == "/some/where");
  ::unsetenv("MINARI_DATASETS_PATH");
  const char* home = std::getenv("HOME");
  if (home) CHECK(default_datasets_root() == std::string(home) + "/.minari/datasets");
  if (old) ::setenv("MINARI_DATASETS_PATH", saved.c_str(), 1);
}

TEST_CASE("minari: a dataset of three episodes reads back with Minari's layout") {
  TempDir tmp("minari_test");
  DatasetInfo info = cartpole_info("recur/cartpole/test-v0");
  info.recur_policy_json = R"({"cell": "lstm", "hidden": 8})";
  info.author_email = "recur@example.org";
  std::string data_dir;
  {
    MinariWriter w(tmp.path.string(), info);
    w.add(synthetic_episode(0, 5, 4, 1, 3, true, true));
    w.add(synthetic_episode(1, 3, 4, 1, 3, true, false));
    Episode e2 = synthetic_episode(2, 1, 4, 1, 0, true, true);
    e2.episode_start.clear();  // defaults to 1, 0, ...
    e2.seed = 18446744073709551615ull;
    w.add(e2);
    CHECK(w.episodes() == 3);
    CHECK(w.steps() == 9);
    // Nothing at <root>/<id> before commit.
    CHECK_FALSE(fs::exists(tmp.path / "recur/cartpole/test-v0"));
    data_dir = w.commit();
  }
  CHECK(data_dir == (tmp.path / "recur/cartpole/test-v0/data").string());
  CHECK(fs::exists(fs::path(data_dir) / "main_data.hdf5"));
  // Namespaces as Minari's create_namespace leaves them; no temp directories left.
  CHECK(read_all(tmp.path / "recur/namespace_metadata.json") == "{}");
  CHECK(read_all(tmp.path / "recur/cartpole/namespace_metadata.json") == "{}");
  for (const auto& entry : fs::directory_iterator(tmp.path / "recur/cartpole"))
    CHECK(entry.path().filename().string().front() != '.');

  H5File f = H5File::open_read(fs::path(data_dir) / "main_data.hdf5");
  CHECK(f.children() == std::vector<std::string>{"episode_0", "episode_1", "episode_2"});
  CHECK(f.attr_names().empty());  // Minari 0.5: no root attributes
  const int steps[3] = {5, 3, 1};
  for (int i = 0; i < 3; ++i) {
    CAPTURE(i);
    const int n = steps[i];
    H5Group g = f.group("episode_" + std::to_string(i));
    CHECK(g.attr_int("id") == i);
    CHECK(g.attr_int("total_steps") == n);
    CHECK(g.attr_type("id").describe() == "int64");
    double sum = 0;
    for (int t = 0; t < n; ++t) sum += 1.0 + 0.5 * t;
    CHECK(g.attr_double("rewards_sum") == doctest::Approx(sum));
    CHECK(g.attr_double("rewards_mean") == doctest::Approx(sum / n));
    CHECK(g.attr_double("rewards_max") == doctest::Approx(1.0 + 0.5 * (n - 1)));
    CHECK(g.attr_double("rewards_min") == 1.0);
    if (i == 0) CHECK(g.attr_double("rewards_std") == doctest::Approx(std::sqrt(0.5)));  // ddof 0
    if (i < 2) {
      CHECK(g.attr_int("seed") == 1000 + i);
    } else {
      CHECK(g.attr_type("seed").describe() == "uint64");
      CHECK(g.attr_uint("seed") == 18446744073709551615ull);
    }

    H5Dataset obs = g.dataset("observations");
    CHECK(obs.shape() == std::vector<int64_t>{n + 1, 4});
    CHECK(obs.type().describe() == "float32");
    const auto o = obs.read<float>();
    CHECK(o[static_cast<size_t>(n) * 4 + 2] ==
          static_cast<float>(i * 100.0 + n + 0.25));  // final obs, column 2
    H5Dataset act = g.dataset("actions");
    CHECK(act.shape() == std::vector<int64_t>{n});
    CHECK(act.type().describe() == "int64");
    CHECK(act.read<int64_t>()[0] == i % 2);
    CHECK(g.dataset("rewards").shape() == std::vector<int64_t>{n});
    CHECK(g.dataset("rewards").type().describe() == "float64");
    for (const char* name : {"terminations", "truncations"}) {
      H5Dataset d = g.dataset(name);
      CHECK(d.shape() == std::vector<int64_t>{n});
      CHECK(d.type().is_h5py_bool());
    }
    const bool terminated = i != 1;
    CHECK(g.dataset("terminations").read<uint8_t>().back() == terminated);
    CHECK(g.dataset("truncations").read<uint8_t>().back() == !terminated);
    REQUIRE(g.contains("infos"));
    H5Group infos = g.group("infos");
    H5Dataset start = infos.dataset("episode_start");
    CHECK(start.shape() == std::vector<int64_t>{n + 1});
    CHECK(start.type().is_h5py_bool());
    const auto s = start.read<uint8_t>();
    CHECK(s[0] == 1);
    CHECK(s.back() == 0);
    if (i < 2) {
      H5Dataset state = infos.dataset("policy_state");
      CHECK(state.shape() == std::vector<int64_t>{n + 1, 3});
      CHECK(state.type().describe() == "float32");
      CHECK(state.read<float>()[4] == -1.25f);  // row 1, column 1
    } else {
      CHECK_FALSE(infos.contains("policy_state"));
    }
  }

  // The bool enum through the plain C API: h5py's FALSE=0 / TRUE=1 over native int8.
  {
    hid_t d = H5Dopen2(f.id(), "/episode_0/terminations", H5P_DEFAULT);
    hid_t t = H5Dget_type(d);
    REQUIRE(H5Tget_class(t) == H5T_ENUM);
    hid_t base = H5Tget_super(t);
    CHECK(H5Tequal(base, H5T_NATIVE_INT8) > 0);
    char name[16];
    int8_t v = 1;
    CHECK(H5Tenum_nameof(t, &v, name, sizeof name) >= 0);
    CHECK(std::string(name) == "TRUE");
    v = 0;
    CHECK(H5Tenum_nameof(t, &v, name, sizeof name) >= 0);
    CHECK(std::string(name) == "FALSE");
    H5Tclose(base);
    H5Tclose(t);
    H5Dclose(d);
  }

  // metadata.json: the outer JSON is standard (the Infinity lives inside string values).
  const auto m = nlohmann::json::parse(read_all(fs::path(data_dir) / "metadata.json"));
  CHECK(m["total_episodes"] == 3);
  CHECK(m["total_steps"] == 9);
  CHECK(m["data_format"] == "hdf5");
  CHECK(m["dataset_id"] == "recur/cartpole/test-v0");
  CHECK(m["minari_version"] == "0.5.0");
  CHECK(m["observation_space"] == space_to_minari_json(info.observation_space));
  CHECK(m["action_space"] == R"({"type": "Discrete", "dtype": "int64", "start": 0, "n": 2})");
  CHECK(m["env_spec"] == minari_env_spec_json(info));
  CHECK_FALSE(m.contains("eval_env_spec"));  // Minari writes none without an eval_env
  CHECK(m["algorithm_name"] == "recur-test");
  CHECK(m["author"] == nlohmann::json::array({"recur tests"}));
  CHECK(m["author_email"] == nlohmann::json::array({"recur@example.org"}));
  CHECK(m["code_permalink"] == "https://example.org/recur");
  CHECK(m["description"] == "synthetic \"episodes\"");
  CHECK(m["requirements"] == nlohmann::json::array({"gymnasium>=1.0"}));
  CHECK(m["dataset_size"].is_number_float());
  CHECK(m["recur_policy"]["cell"] == "lstm");
  // Python's separators, one line.
  const std::string text = read_all(fs::path(data_dir) / "metadata.json");
  CHECK(text.rfind(R"({"total_episodes": 3, "total_steps": 9, "data_format": "hdf5", )", 0) == 0);
  CHECK(text.find('\n') == std::string::npos);
}

TEST_CASE(
    "minari: Box actions, no env_spec when the writer is given none, optional keys left out") {
  TempDir tmp("minari_test");
  DatasetInfo info;
  info.dataset_id = "pendulum-novel-v3";
  info.env_id = "PendulumNoVel-v1";
  info.observation_space = envs::Space::box({-1.0f, -1.0f}, {1.0f, 1.0f});
  info.action_space = envs::Space::box(-2.0f, 2.0f, {1});
  MinariWriter w(tmp.path.string(), info);
  w.add(synthetic_episode(0, 4, 2, 1, 0, false, false));
  const std::string data_dir = w.commit();
  H5File f = H5File::open_read(fs::path(data_dir) / "main_data.hdf5");
  H5Dataset act = f.group("episode_0").dataset("actions");
  CHECK(act.shape() == std::vector<int64_t>{4, 1});
  CHECK(act.type().describe() == "float32");
  CHECK(act.read<float>() == std::vector<float>{0.0f, 0.5f, 1.0f, 1.5f});
  const auto m = nlohmann::json::parse(read_all(fs::path(data_dir) / "metadata.json"));
  CHECK_FALSE(m.contains("env_spec"));
  CHECK_FALSE(m.contains("author"));
  CHECK_FALSE(m.contains("recur_policy"));
  CHECK(m["action_space"] ==
        R"({"type": "Box", "dtype": "float32", "shape": [1], "low": [-2.0], "high": [2.0]})");
  CHECK_FALSE(fs::exists(tmp.path / "namespace_metadata.json"));  // no namespace
}

TEST_CASE("minari: bad episodes are refused before anything is written") {
  TempDir tmp("minari_test");
  MinariWriter w(tmp.path.string(), cartpole_info("bad-v0"));
  Episode ok = synthetic_episode(0, 3, 4, 1, 0, true, true);
  Episode e = ok;
  e.observations.pop_back();
  CHECK_THROWS_AS(w.add(e), std::invalid_argument);
  e = ok;
  e.obs_dim = 3;
  CHECK_THROWS_AS(w.add(e), std::invalid_argument);
  e = ok;
  e.actions[1] = 2;  // not in Discrete(2)
  CHECK_THROWS_AS(w.add(e), std::invalid_argument);
  e = ok;
  e.actions[1] = 0.5f;
  CHECK_THROWS_AS(w.add(e), std::invalid_argument);
  e = ok;
  e.terminations[0] = 2;
  CHECK_THROWS_AS(w.add(e), std::invalid_argument);
  e = ok;
  e.state_dim = 2;  // policy_state empty
  CHECK_THROWS_AS(w.add(e), std::invalid_argument);
  e = synthetic_episode(0, 0, 4, 1, 0, true, true);
  CHECK_THROWS_AS(w.add(e), std::invalid_argument);
  CHECK(w.episodes() == 0);
  w.add(ok);
  CHECK(w.episodes() == 1);
  w.commit();
  CHECK_THROWS_AS(w.add(ok), std::invalid_argument);
  CHECK_THROWS_AS(w.commit(), recur::Error);
}

TEST_CASE("minari: existing datasets, overwrite, abandoned writers, unwritable roots") {
  TempDir tmp("minari_test");
  const std::string root = tmp.path.string();
  const fs::path dir = tmp.path / "recur/cartpole/x-v0";
  {
    MinariWriter w(root, cartpole_info("recur/cartpole/x-v0"));
    w.add(synthetic_episode(0, 2, 4, 1, 0, true, true));
    w.commit();
  }
  // Refused without overwrite, naming the flag.
  const std::string e = error_of([&] { MinariWriter(root, cartpole_info("recur/cartpole/x-v0")); });
  CHECK(e.find("already exists") != std::string::npos);
  CHECK(e.find("--overwrite") != std::string::npos);
  CHECK(e.find(dir.string()) != std::string::npos);

  // Abandoned (destroyed without commit): the old dataset stays as it was, no temp dirs remain.
  {
    DatasetInfo info = cartpole_info("recur/cartpole/x-v0");
    info.overwrite = true;
    info.write_d4rl = true;
    MinariWriter w(root, info);
    w.add(synthetic_episode(0, 3, 4, 1, 0, true, true));
    w.add(synthetic_episode(1, 3, 4, 1, 0, true, true));
  }
  auto entries = [&] {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(tmp.path / "recur/cartpole"))
      names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  };
  CHECK(entries() == std::vector<std::string>{"namespace_metadata.json", "x-v0"});
  CHECK(nlohmann::json::parse(read_all(dir / "data/metadata.json"))["total_episodes"] == 1);

  // With overwrite the new dataset replaces the old one.
  {
    DatasetInfo info = cartpole_info("recur/cartpole/x-v0");
    info.overwrite = true;
    MinariWriter w(root, info);
    w.add(synthetic_episode(0, 3, 4, 1, 0, true, true));
    w.add(synthetic_episode(1, 3, 4, 1, 0, true, true));
    w.commit();
  }
  CHECK(entries() == std::vector<std::string>{"namespace_metadata.json", "x-v0"});
  CHECK(nlohmann::json::parse(read_all(dir / "data/metadata.json"))["total_episodes"] == 2);

  // A brand-new id abandoned: nothing at <root>/<id>.
  {
    MinariWriter w(root, cartpole_info("recur/cartpole/never-v0"));
    w.add(synthetic_episode(0, 3, 4, 1, 0, true, true));
  }
  CHECK_FALSE(fs::exists(tmp.path / "recur/cartpole/never-v0"));
  CHECK(entries() == std::vector<std::string>{"namespace_metadata.json", "x-v0"});

  // An unwritable root (its parent is a regular file, which stops root too).
  const fs::path file = tmp.path / "a_file";
  std::ofstream(file) << "x";
  const std::string bad =
      error_of([&] { MinariWriter((file / "root").string(), cartpole_info("ns/y-v0")); });
  CHECK(bad.find((file / "root").string()) != std::string::npos);
  CHECK(bad.find("cannot create") != std::string::npos);
  MESSAGE(bad);

  // An id without a version is refused before anything touches the disk.
  CHECK_THROWS_AS(MinariWriter(root, cartpole_info("recur/cartpole/noversion")), recur::Error);
}

TEST_CASE("minari: the D4RL file beside data/") {
  TempDir tmp("minari_test");
  DatasetInfo info = cartpole_info("d4rl-test-v0");
  info.write_d4rl = true;
  MinariWriter w(tmp.path.string(), info);
  w.add(synthetic_episode(0, 3, 4, 1, 2, true, true));   // terminated
  w.add(synthetic_episode(1, 2, 4, 1, 2, true, false));  // truncated
  Episode both = synthetic_episode(2, 2, 4, 1, 2, true, true);
  both.truncations.back() = 1;  // terminated and truncated: not a timeout
  w.add(both);
  w.commit();
  // Minari's data/ holds only its two files.
  std::vector<std::string> data_files;
  for (const auto& entry : fs::directory_iterator(tmp.path / "d4rl-test-v0/data"))
    data_files.push_back(entry.path().filename().string());
  std::sort(data_files.begin(), data_files.end());
  CHECK(data_files == std::vector<std::string>{"main_data.hdf5", "metadata.json"});

  H5File f = H5File::open_read(tmp.path / "d4rl-test-v0/d4rl.hdf5");
  CHECK(f.dataset("observations").shape() == std::vector<int64_t>{7, 4});
  CHECK(f.dataset("next_observations").shape() == std::vector<int64_t>{7, 4});
  CHECK(f.dataset("observations").type().describe() == "float32");
  CHECK(f.dataset("actions").shape() == std::vector<int64_t>{7});
  CHECK(f.dataset("actions").type().describe() == "int64");
  CHECK(f.dataset("rewards").type().describe() == "float32");
  CHECK(f.dataset("terminals").type().is_h5py_bool());
  CHECK(f.dataset("timeouts").type().is_h5py_bool());
  const auto obs = f.dataset("observations").read<float>();
  const auto next = f.dataset("next_observations").read<float>();
  // Row 3 is episode 1's reset observation; its next is episode 1's row 1.
  CHECK(obs[3 * 4] == 100.0f);
  CHECK(next[3 * 4] == 101.0f);
  CHECK(next[2 * 4] == 3.0f);  // episode 0's final observation
  CHECK(f.dataset("rewards").read<float>() ==
        std::vector<float>{1.0f, 1.5f, 2.0f, 1.0f, 1.5f, 1.0f, 1.5f});
  CHECK(f.dataset("terminals").read<uint8_t>() == std::vector<uint8_t>{0, 0, 1, 0, 0, 0, 1});
  CHECK(f.dataset("timeouts").read<uint8_t>() == std::vector<uint8_t>{0, 0, 0, 0, 1, 0, 0});
  // gzip, as D4RL's generation scripts write.
  hid_t d = H5Dopen2(f.id(), "observations", H5P_DEFAULT);
  hid_t dcpl = H5Dget_create_plist(d);
  unsigned flags = 0, cd[4];
  size_t ncd = 4;
  CHECK(H5Pget_filter2(dcpl, 0, &flags, &ncd, cd, 0, nullptr, nullptr) == H5Z_FILTER_DEFLATE);
  H5Pclose(dcpl);
  H5Dclose(d);
}

TEST_CASE("minari: CartPole rollouts with recurrent state") {
  // Random-policy CartPole episodes with a fake recurrent state, written to a temp root, or to
  // $RECUR_KEEP_MINARI_DATASET (kept) for loading with Python's minari.
  const char* keep = std::getenv("RECUR_KEEP_MINARI_DATASET");
  TempDir tmp("minari_test");
  const std::string root = keep && *keep ? keep : tmp.path.string();
  DatasetInfo info = cartpole_info("recur/cartpole/random-v0");
  info.overwrite = true;
  info.write_d4rl = true;
  info.algorithm_name = "random";
  info.description = "CartPole-v1, uniform random actions (recur test)";
  info.recur_policy_json = R"({"type": "random", "state_dim": 2})";
  auto env = envs::make("CartPole-v1");
  info.observation_space = env->observation_space();
  MinariWriter w(root, info);
  Rng rng(3);
  int64_t total = 0;
  for (int i = 0; i < 3; ++i) {
    Episode ep;
    ep.seed = 42 + static_cast<uint64_t>(i);
    ep.obs_dim = env->obs_dim();
    ep.action_dim = 1;
    ep.state_dim = 2;
    auto obs = env->reset(ep.seed);
    ep.observations.assign(obs.begin(), obs.end());
    ep.episode_start.push_back(1);
    ep.policy_state.insert(ep.policy_state.end(), {0.0f, 0.0f});
    for (;;) {
      float a = 0;
      env->action_space().sample(rng, std::span(&a, 1));
      const auto r = env->step(std::span(&a, 1));
      ep.actions.push_back(a);
      ep.rewards.push_back(r.reward);
      ep.terminations.push_back(r.terminated);
      ep.truncations.push_back(r.truncated);
      ep.observations.insert(ep.observations.end(), r.obs.begin(), r.obs.end());
      ep.episode_start.push_back(0);
      const float s = static_cast<float>(ep.steps());
      ep.policy_state.insert(ep.policy_state.end(), {s, -s});
      if (r.done()) break;
    }
    total += ep.steps();
    w.add(ep);
  }
  const std::string data_dir = w.commit();
  CHECK(w.steps() == total);
  const auto m = nlohmann::json::parse(read_all(fs::path(data_dir) / "metadata.json"));
  CHECK(m["total_steps"] == total);
  CHECK(
      m["observation_space"] ==
      R"({"type": "Box", "dtype": "float32", "shape": [4], "low": [-4.800000190734863, -Infinity, -0.41887903213500977, -Infinity], "high": [4.800000190734863, Infinity, 0.41887903213500977, Infinity]})");
  if (keep && *keep) MESSAGE("kept dataset at " << data_dir);
}
