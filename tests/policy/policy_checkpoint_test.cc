#include "policy/policy_checkpoint.h"

#include <unistd.h>

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "core/error.h"
#include "policy/policy_actor.h"

using namespace recur::policy;

namespace {
std::filesystem::path temp_path(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("recur_policy_ckpt_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir / name;
}
PolicySpec spec() {
  PolicySpec s;
  s.obs_dim = 4;
  s.action_dim = 2;
  s.encoder = {8};
  s.hidden = 6;
  s.layers = 2;
  return s;
}
std::string error_of(const Checkpoint& c) {
  try {
    validate_policy(c, "test.safetensors");
  } catch (const recur::Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("a policy checkpoint round trips bit-exactly and acts identically") {
  recur::Rng rng(4);
  const TensorMap params = init_policy(spec(), rng);
  const auto path = temp_path("policy.safetensors");
  save_policy(path, spec(), params, {{"run.env_steps", "1234"}});
  const PolicyCheckpoint back = load_policy(path);
  CHECK(back.spec == spec());
  CHECK(back.tensors == params);
  CHECK(back.metadata.at("run.env_steps") == "1234");
  CHECK(back.metadata.at("recur.format") == kPolicyFormat);

  PolicyActor a(spec(), 2), b(back.spec, 2);
  a.load(params);
  b.load(back.tensors);
  std::vector<float> obs = {0.1f, -0.2f, 0.3f, 0.4f, 1, 2, 3, 4}, act_a(2), act_b(2), lp_a(2),
                     lp_b(2), v_a(2), v_b(2);
  std::vector<uint8_t> st = {1, 1};
  recur::Rng ra(9), rb(9);
  a.act(obs, st, ra, false, act_a, lp_a, v_a);
  b.act(obs, st, rb, false, act_b, lp_b, v_b);
  CHECK(act_a == act_b);
  CHECK(lp_a == lp_b);
  CHECK(v_a == v_b);
}

TEST_CASE("policy checkpoints with a wrong content are rejected with their own message") {
  recur::Rng rng(4);
  Checkpoint good;
  good.tensors = init_policy(spec(), rng);
  good.metadata = spec().to_metadata();
  good.metadata["recur.format"] = kPolicyFormat;
  CHECK(error_of(good).empty());

  Checkpoint c = good;
  c.metadata.erase("recur.format");
  CHECK(error_of(c).find("not a recur policy checkpoint") != std::string::npos);
  c = good;
  c.metadata["recur.format"] = "recur.policy/99";
  CHECK(error_of(c).find("not supported") != std::string::npos);
  c = good;
  c.tensors.erase("core.weight_hh_l1");
  CHECK(error_of(c).find("'core.weight_hh_l1' is missing") != std::string::npos);
  c = good;
  c.tensors["actor.weight"] = Tensor::zeros({3, 6});
  CHECK(error_of(c).find("'actor.weight' has shape [3, 6]") != std::string::npos);
  c = good;
  c.tensors["stray"] = Tensor::zeros({1});
  CHECK(error_of(c).find("unexpected tensor 'stray'") != std::string::npos);
  c = good;
  c.tensors["optim.adam.step"] = Tensor::zeros({1});
  CHECK(error_of(c).empty());
  c = good;
  c.metadata["core.hidden"] = "six";
  CHECK(error_of(c).find("'core.hidden' = 'six' is not an integer") != std::string::npos);
  // save_policy refuses to write what load_policy would reject.
  std::filesystem::remove(temp_path("bad.safetensors"));
  TensorMap incomplete = good.tensors;
  incomplete.erase("critic.bias");
  CHECK_THROWS_AS(save_policy(temp_path("bad.safetensors"), spec(), incomplete), recur::Error);
  CHECK_FALSE(std::filesystem::exists(temp_path("bad.safetensors")));
  TensorMap nan = good.tensors;
  nan["critic.bias"].data[0] = std::nanf("");
  CHECK_THROWS_WITH_AS(save_policy(temp_path("bad.safetensors"), spec(), nan),
                       doctest::Contains("non-finite"), recur::Error);
  CHECK_FALSE(std::filesystem::exists(temp_path("bad.safetensors")));
}
