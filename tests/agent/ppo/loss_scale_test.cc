// The dynamic loss scale of fp16 gradients (agent/ppo/loss_scale.h) and the updater's use of it:
// an overflow (finite loss, non-finite gradient norm) skips its minibatch without stopping the
// run, even with algo.on_nonfinite: stop, and halves the scale after the update; at a scale of 1
// a non-finite gradient is the data's own and stops the run as before. The engine here is the
// host engine made to act as the CUDA engine with fp16 data does: its gradients overflow while
// its scale is above a threshold, and its deferred steps skip as the device guard does
// (kernels::deferred_step_guard with tolerate_overflow). The CUDA engine's own scale reaches
// cuDNN's backward (cudnn_sequence_executor_test.cc, GPU).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "agent/ppo/loss_scale.h"
#include "agent/ppo/updater.h"
#include "policy/gpu_executors.h"
#include "policy/policy_spec.h"
#include "tests/support/wrapped_host_engine.h"

using namespace recur;

namespace {

TEST_CASE("loss scale: halves on an overflow, doubles after 2000 clean steps, within [1, 65536]") {
  agent::LossScale s(1024.0f);
  CHECK(s.tolerates_overflow());
  CHECK_FALSE(s.after_update(0, 1999));  // 1999 clean steps: not yet
  CHECK(s.clean_steps() == 1999);
  CHECK(s.after_update(0, 1));  // the 2000th
  CHECK(s.value() == 2048.0f);
  CHECK(s.clean_steps() == 0);
  CHECK_FALSE(s.after_update(0, 1500));
  CHECK(s.after_update(2, 6));  // an overflow halves and restarts the clean count
  CHECK(s.value() == 1024.0f);
  CHECK(s.clean_steps() == 0);
  for (int i = 0; i < 10; ++i) s.after_update(1, 0);
  CHECK(s.value() == 1.0f);
  CHECK_FALSE(s.tolerates_overflow());
  CHECK_FALSE(s.after_update(1, 0));  // not below 1
  agent::LossScale top(65536.0f);
  CHECK_FALSE(top.after_update(0, 4000));  // not above 65536
  CHECK(top.value() == 65536.0f);
}

// The host engine with 16-bit gradients as the CUDA engine has them under device.cudnn_data:
// fp16: every minibatch's gradient norm overflows to infinity while the scale is above
// `overflow_above` (the loss stays finite: the forward is unscaled), and its deferred steps
// tolerate an overflow while the scale is above 1, as the device guard does.
class ScalingEngine : public test::DeferringEngine {
 public:
  ScalingEngine(const policy::PolicySpec& spec, const policy::TensorMap& weights,
                float overflow_above)
      : DeferringEngine(spec, weights), overflow_above_(overflow_above) {}

  bool scales_gradients() const override { return true; }
  void set_gradient_scale(float scale) override {
    scale_ = scale;
    scales.push_back(scale);
  }
  agent::MinibatchResult compute(std::span<const int> envs, const kernels::PpoLossConfig& loss,
                                 bool normalize) override {
    agent::MinibatchResult res = DeferringEngine::compute(envs, loss, normalize);
    if (scale_ > overflow_above_) res.grad_norm = std::numeric_limits<double>::infinity();
    return res;
  }

  std::vector<float> scales;  // every set_gradient_scale, in order

 protected:
  bool tolerated(const agent::MinibatchResult& res) const override {
    return scale_ > 1.0f && std::isfinite(res.loss);
  }

 private:
  float overflow_above_, scale_ = 0;
};

}  // namespace

TEST_CASE("PPO with fp16 gradients: overflows skip without stopping and lower the scale") {
  const policy::PolicySpec spec = test::small_policy_spec();
  agent::AlgoConfig cfg;
  cfg.epochs = 2;
  cfg.num_minibatches = 2;
  REQUIRE(cfg.on_nonfinite == "stop");
  for (const bool deferred : {true, false}) {
    CAPTURE(deferred);
    Rng init(3), rng(5);
    auto engine = std::make_unique<ScalingEngine>(spec, policy::init_policy(spec, init), 256.0f);
    ScalingEngine* raw = engine.get();
    agent::PpoUpdater ppo(cfg, std::move(engine), 7);
    ppo.set_deferred_steps(deferred);
    REQUIRE(ppo.loss_scale() != nullptr);
    CHECK(raw->scales == std::vector<float>{policy::kFp16GradientScale});

    // 1024 and 512 overflow: every minibatch skipped, no step, no error, the scale halved.
    for (const float next : {512.0f, 256.0f}) {
      const auto kept = ppo.engine().to_tensors();
      agent::Rollout r = test::random_rollout(spec, 4, 4, rng);
      const agent::UpdateStats s = ppo.update(r, 0.0, 100);
      CHECK(s.overflows == 4);
      CHECK(s.skipped == 0);
      CHECK(s.minibatches == 0);
      CHECK(ppo.loss_scale()->value() == next);
      CHECK(ppo.engine().to_tensors() == kept);
      CHECK(ppo.consecutive_nonfinite() == 0);  // overflows are not the non-finite streak
    }
    CHECK(raw->scales == std::vector<float>{1024.0f, 512.0f, 256.0f});

    // 256 does not: the steps are taken and counted towards the next doubling.
    const auto before = ppo.engine().to_tensors();
    agent::Rollout r = test::random_rollout(spec, 4, 4, rng);
    const agent::UpdateStats s = ppo.update(r, 0.0, 200);
    CHECK(s.overflows == 0);
    CHECK(s.minibatches == 4);
    CHECK(ppo.loss_scale()->value() == 256.0f);
    CHECK(ppo.loss_scale()->clean_steps() == 4);
    CHECK(ppo.engine().to_tensors() != before);
  }
}

TEST_CASE("PPO with fp16 gradients: at a scale of 1 a non-finite gradient stops the run") {
  const policy::PolicySpec spec = test::small_policy_spec();
  agent::AlgoConfig cfg;
  cfg.epochs = 1;
  cfg.num_minibatches = 2;
  for (const bool deferred : {true, false}) {
    CAPTURE(deferred);
    Rng init(3), rng(5);
    // Overflows at every scale: the gradient is non-finite whatever the scale.
    auto engine = std::make_unique<ScalingEngine>(spec, policy::init_policy(spec, init), 0.0f);
    agent::PpoUpdater ppo(cfg, std::move(engine), 7);
    ppo.set_deferred_steps(deferred);
    // 1024 -> 1 in ten halvings, each update's minibatches skipped as overflows.
    for (int i = 0; i < 10; ++i) {
      agent::Rollout r = test::random_rollout(spec, 4, 4, rng);
      CHECK(ppo.update(r, 0.0, 100 * (i + 1)).overflows == 2);
    }
    REQUIRE(ppo.loss_scale()->value() == 1.0f);
    const auto kept = ppo.engine().to_tensors();
    agent::Rollout r = test::random_rollout(spec, 4, 4, rng);
    CHECK_THROWS_WITH_AS(ppo.update(r, 0.0, 5000),
                         doctest::Contains("the update at env step 5000 (epoch 1 of 1, minibatch "
                                           "1 of 2): the gradient norm is non-finite"),
                         agent::NonFiniteUpdate);
    CHECK(ppo.engine().to_tensors() == kept);
  }
}
