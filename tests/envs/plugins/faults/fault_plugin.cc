// A small env plugin for the loader's tests, compiled once per fault (RECUR_TEST_FAULT): each
// build breaks the plugin in one way that recur must report clearly
// (tests/envs/plugins/faults/CMakeLists.txt).
//
// The env, Counter: obs [t / 10], Discrete(2) (BoxCounter-v0: Box(-2, 2, (1,))), reward 1 per step,
// terminated at t = 10; each episode starts at a random t0 in {0, 1, 2}, so seeds matter. Its state
// is t, so runs resume exactly. Options: fail_at, spike_at / spike_reward, nan_obs_at (below).
#include <limits>
#include <memory>
#include <stdexcept>

#include "envs/plugin.h"

namespace {

using recur::envs::Env;
using recur::envs::Space;

class Counter : public Env {
 public:
  // box_actions: a Box(-2, 2, (1,)) action space instead (BoxCounter-v0: an env whose action
  // bounds only the plugin knows, for `recur convert export --to onnx`).
  explicit Counter(recur::OptionReader& options, bool box_actions = false)
      : Env(Space::box(0.0f, 1.0f, {1}),
            box_actions ? Space::box(-2.0f, 2.0f, {1}) : Space::discrete(2)),
        fail_at_(static_cast<int>(options.get_int("fail_at", 0))),
        spike_at_(options.get_int("spike_at", 0)),
        spike_reward_(options.get_double("spike_reward", 3e38)),
        nan_obs_at_(options.get_int("nan_obs_at", 0)) {
#if RECUR_TEST_FAULT == 4
    throw std::runtime_error("the counter's constructor fails on purpose");
#endif
  }

 protected:
  void reset_impl(recur::Rng& rng, std::optional<uint64_t> /*seed*/) override {
#if RECUR_TEST_FAULT == 5
    throw std::runtime_error("the counter's reset fails on purpose");
#endif
    t_ = static_cast<int>(rng.uniform_int(3));
  }
  Outcome step_impl(std::span<const float>) override {
    ++t_;
    ++lifetime_steps_;
    if (fail_at_ > 0 && elapsed_steps() + 1 == fail_at_)
      throw std::runtime_error("the counter's step fails on purpose");
    nan_now_ = nan_obs_at_ > 0 && lifetime_steps_ == nan_obs_at_;
    const bool spike =
        spike_at_ > 0 && lifetime_steps_ >= spike_at_ && lifetime_steps_ < spike_at_ + 8;
    const double reward = spike ? spike_reward_ : 1.0;
    return {reward, t_ >= 10};
  }
  void observe(std::span<float> obs) const override {
    obs[0] = nan_now_ ? std::numeric_limits<float>::quiet_NaN() : static_cast<float>(t_) / 10.0f;
  }

 public:
  int state_size() const override {
    return 1;
  }
  void get_state(std::span<double> out) const override {
    out[0] = t_;
  }

 protected:
  void set_state_impl(std::span<const double> s) override {
    t_ = static_cast<int>(s[0]);
  }

 private:
  int fail_at_ = 0;
  // From the env's K-th step since construction (not saved: a resumed run's envs count afresh),
  // 8 steps give the reward spike_reward (huge finite rewards in a row overflow the returns and the
  // value loss); or that step gives a NaN observation: the non-finite guards' tests.
  long long spike_at_ = 0;
  double spike_reward_ = 0;
  long long nan_obs_at_ = 0;
  long long lifetime_steps_ = 0;
  bool nan_now_ = false;
  int t_ = 0;
};

recur::envs::EnvSpec counter_spec(const char* id, bool box_actions = false) {
  return {.id = id,
          .family = "test",
          .max_episode_steps = 20,
          .reward_threshold = 10.0,
          .summary = "counts to 10 (recur's plugin tests)",
          .factory = [box_actions](recur::OptionReader& o) -> std::unique_ptr<Env> {
            return std::make_unique<Counter>(o, box_actions);
          }};
}

}  // namespace

// Faults: 0 none, 1 an id that clashes with a built-in, 2 an id other plugins also register,
// 3 registration throws, 4 the constructor throws, 5 reset throws; step throws at step
// `fail_at` (an env option) in every build.
#if RECUR_TEST_FAULT == 6
// No entry point: the plugin exports something else.
extern "C" __attribute__((visibility("default"))) int not_a_recur_plugin() {
  return 0;
}
#elif RECUR_TEST_FAULT == 7
// Built against another recur: the entry point reports ABI 99 and recur 9.9.9.
extern "C" __attribute__((visibility("default"))) const RecurEnvPluginInfo* recur_env_plugin() {
  static const RecurEnvPluginInfo info = {
      99, sizeof(RecurEnvPluginInfo), "9.9.9", RECUR_CXX_BUILD, 0, 0, 0, "future", "1", nullptr};
  return &info;
}
#else
RECUR_ENV_PLUGIN("fault-test", "1", registrar) {
#if RECUR_TEST_FAULT == 1
  registrar.add(counter_spec("CartPole-v1"));
#elif RECUR_TEST_FAULT == 2
  registrar.add(counter_spec("SharedCounter-v0"));
#elif RECUR_TEST_FAULT == 3
  registrar.add(counter_spec("BrokenCounter-v0"));
  throw std::runtime_error("registration fails on purpose");
#elif RECUR_TEST_FAULT == 4
  registrar.add(counter_spec("CtorFailCounter-v0"));
#elif RECUR_TEST_FAULT == 5
  registrar.add(counter_spec("ResetFailCounter-v0"));
#else
  registrar.add(counter_spec("Counter-v0"));
  registrar.add(counter_spec("BoxCounter-v0", /*box_actions=*/true));
#endif
}
#endif
