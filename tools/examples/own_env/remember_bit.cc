// A program with an env of its own, trained, evaluated and recorded with recur's training API
// (agent/training.h) against an installed recur: find_package(recur COMPONENTS agent).
//
//   remember_bit [OUTPUT_DIR]     (default: runs)
//
// RememberBit-v0 shows a bit (-1 or +1) at step 0 and nothing but a step counter's end flag
// afterwards; at step k it asks for the bit: action 0 or 1 earns +1 when it names the bit, -1
// otherwise, and the episode ends. Earlier actions earn nothing. Only a policy that remembers
// does better than 0 on average, which an LSTM learns in a few thousand env steps.
//
// The program registers the env (source "program"), trains it from remember_bit.yaml (beside
// this file) into OUTPUT_DIR/remember_bit-<time>/, prints the time to target, evaluates the best
// checkpoint and records 10 episodes as a Minari dataset under OUTPUT_DIR/datasets. It exits 1
// when the target (run.target_return) is not reached; recur's errors end it with 2.
#include <cstdio>
#include <exception>
#include <memory>
#include <span>
#include <string>

#include "agent/training.h"
#include "core/error.h"
#include "core/logging.h"
#include "envs/registry.h"

#ifndef REMEMBER_BIT_CONFIG
#define REMEMBER_BIT_CONFIG "remember_bit.yaml"
#endif

namespace {

using recur::envs::Env;
using recur::envs::Space;

class RememberBit : public Env {
 public:
  explicit RememberBit(int k) : Env(Space::box(-1.0f, 1.0f, {2}), Space::discrete(2)), k_(k) {}

  // The state (bit, step) for checks and exact resumes.
  int state_size() const override { return 2; }
  void get_state(std::span<double> out) const override {
    out[0] = bit_;
    out[1] = step_;
  }

 protected:
  void reset_impl(recur::Rng& rng, std::optional<uint64_t> /*seed*/) override {
    bit_ = static_cast<int>(rng.uniform_int(2));
    step_ = 0;
  }
  Outcome step_impl(std::span<const float> action) override {
    if (step_++ < k_) return {};
    return {static_cast<int>(action[0]) == bit_ ? 1.0 : -1.0, true};
  }
  // obs[0]: the bit as -1/+1 at step 0, else 0; obs[1]: 1 at step k (answer now), else 0.
  void observe(std::span<float> obs) const override {
    obs[0] = step_ == 0 ? (bit_ ? 1.0f : -1.0f) : 0.0f;
    obs[1] = step_ == k_ ? 1.0f : 0.0f;
  }
  void set_state_impl(std::span<const double> state) override {
    bit_ = static_cast<int>(state[0]);
    step_ = static_cast<int>(state[1]);
  }

 private:
  int k_;
  int bit_ = 0, step_ = 0;
};

void register_remember_bit() {
  recur::envs::EnvSpec spec;
  spec.id = "RememberBit-v0";
  spec.family = "memory";
  spec.reward_threshold = 0.9;
  spec.summary = "answer the bit shown k steps earlier (option k, default 4)";
  spec.source = "program remember_bit";
  spec.factory = [](recur::OptionReader& options) -> std::unique_ptr<Env> {
    const auto k = options.get_int("k", 4);
    RECUR_CHECK(k >= 1 && k <= 1000, "RememberBit-v0: k = {}; use 1..1000", k);
    return std::make_unique<RememberBit>(static_cast<int>(k));
  };
  recur::envs::registry().add(std::move(spec));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2) {
    std::fprintf(stderr, "usage: %s [OUTPUT_DIR]\n", argv[0]);
    return 2;
  }
  const std::string out = argc == 2 ? argv[1] : "runs";
  try {
    recur::setup_logging("warn");
    register_remember_bit();
    namespace agent = recur::agent;

    // As `recur train remember_bit.yaml --set run.output_dir=OUT` (Ctrl-C stops it cleanly).
    agent::TrainOptions train_options;
    train_options.overrides = {"run.output_dir=" + out};
    const agent::TrainResult run = agent::train(REMEMBER_BIT_CONFIG, train_options);
    if (run.target_env_steps)
      std::printf("RememberBit-v0: target %.2f reached at %lld env steps, %.1f s\n", *run.target,
                  static_cast<long long>(*run.target_env_steps), run.target_seconds);
    else
      std::printf("RememberBit-v0: target %.2f not reached in %lld env steps (%.1f s)\n",
                  *run.target, static_cast<long long>(run.env_steps), run.seconds);
    std::printf("run directory %s\n", run.run_dir.string().c_str());

    // As `recur eval RUN --episodes 50 --deterministic`.
    agent::EvaluateOptions eval_options;
    eval_options.episodes = 50;
    eval_options.deterministic = true;
    const agent::EvaluateResult eval = agent::evaluate(run.run_dir.string(), eval_options);
    std::printf("evaluation (%zu episodes, deterministic): mean return %.2f\n",
                eval.eval.returns.size(), eval.eval.mean_return());

    // As `recur record RUN --episodes 10 --dataset-id recur/remember-bit/ppo-lstm-v0 --out ...`.
    agent::RecordOptions record_options;
    record_options.dataset_id = "recur/remember-bit/ppo-lstm-v0";
    record_options.episodes = 10;
    record_options.out = out + "/datasets";
    record_options.overwrite = true;
    const agent::RecordResult rec = agent::record_dataset(run.run_dir.string(), record_options);
    std::printf("dataset %s: %zu episodes, %lld steps, mean return %.2f\n",
                rec.dataset.string().c_str(), rec.summary.returns.size(),
                static_cast<long long>(rec.summary.steps), rec.summary.mean_return());
    return run.target_env_steps ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
