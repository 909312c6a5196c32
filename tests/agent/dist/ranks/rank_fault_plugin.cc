// An env plugin for the data-parallel fault tests (tests/agent/dist/ranks/CMakeLists.txt): Counter
// (obs [t / 10], Discrete(2), reward 1 per step, terminated at t = 10) that throws in step() once
// it has taken `fail_at` steps, on the rank named by the option `fail_rank` only (read from the
// launcher's OMPI_COMM_WORLD_RANK): one rank fails while its peers wait in a collective.
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

#include "envs/plugin.h"

namespace {

using recur::envs::Env;
using recur::envs::Space;

class RankCounter : public Env {
 public:
  explicit RankCounter(recur::OptionReader& options)
      : Env(Space::box(0.0f, 1.0f, {1}), Space::discrete(2)),
        fail_at_(options.get_int("fail_at", 0)),
        fail_rank_(options.get_int("fail_rank", 1)) {
    const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
    on_failing_rank_ = rank != nullptr && std::stoll(rank) == fail_rank_;
  }

 protected:
  void reset_impl(recur::Rng& rng, std::optional<uint64_t> /*seed*/) override {
    t_ = static_cast<int>(rng.uniform_int(3));
  }
  Outcome step_impl(std::span<const float>) override {
    ++t_;
    if (on_failing_rank_ && ++steps_ == fail_at_)
      throw std::runtime_error("the rank counter fails on purpose");
    return {1.0, t_ >= 10};
  }
  void observe(std::span<float> obs) const override { obs[0] = static_cast<float>(t_) / 10.0f; }

 private:
  int64_t fail_at_, fail_rank_, steps_ = 0;
  bool on_failing_rank_ = false;
  int t_ = 0;
};

}  // namespace

RECUR_ENV_PLUGIN("rank-fault-test", "1", registrar) {
  registrar.add({.id = "RankCounter-v0",
                 .family = "test",
                 .max_episode_steps = 20,
                 .reward_threshold = 10.0,
                 .summary = "counts to 10; one rank throws (recur's data-parallel tests)",
                 .factory = [](recur::OptionReader& o) -> std::unique_ptr<Env> {
                   return std::make_unique<RankCounter>(o);
                 }});
}
