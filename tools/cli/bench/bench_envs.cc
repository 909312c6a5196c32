#include "tools/cli/bench/bench_envs.h"

#include <algorithm>
#include <chrono>
#include <functional>

#include "core/error.h"
#include "core/rng.h"
#include "envs/registry.h"
#include "envs/vector_env.h"

namespace recur::cli {
namespace {

using Clock = std::chrono::steady_clock;

// Median over `repeats` runs of fn(), which returns the steps it made; steps per second.
double median_rate(int repeats, const std::function<int64_t()>& fn) {
  std::vector<double> rates;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    const int64_t steps = fn();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    rates.push_back(static_cast<double>(steps) / s);
  }
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

// kBatches batches of (n, dim) random valid actions, cycled through during timing.
constexpr int kBatches = 256;
std::vector<float> random_actions(const envs::Space& space, int n, uint64_t seed) {
  Rng rng(seed);
  const auto dim = static_cast<size_t>(space.flat_size());
  std::vector<float> a(static_cast<size_t>(kBatches) * n * dim);
  for (size_t i = 0; i < a.size(); i += dim) space.sample(rng, std::span(a).subspan(i, dim));
  return a;
}

}  // namespace

std::vector<EnvBenchRow> bench_envs(const EnvBenchConfig& config) {
  RECUR_CHECK(config.steps >= 1000 && config.num_envs >= 1 && config.repeats >= 1,
              "bench envs: need steps >= 1000, num_envs >= 1, repeats >= 1");
  const auto ids = config.ids.empty() ? envs::registry().ids() : config.ids;
  std::vector<EnvBenchRow> rows;
  for (const auto& id : ids) {
    EnvBenchRow row;
    row.id = id;
    const int n = config.num_envs;

    // One env, one thread: the env's own speed.
    {
      auto env = envs::make(id);
      const auto dim = static_cast<size_t>(env->action_dim());
      const auto actions = random_actions(env->action_space(), 1, 1);
      env->reset(0);
      row.single_steps_per_s = median_rate(config.repeats, [&] {
        for (int64_t s = 0; s < config.steps; ++s) {
          const size_t b = static_cast<size_t>(s % (kBatches)) * dim;
          if (env->step(std::span(actions).subspan(b, dim)).done()) env->reset();
        }
        return config.steps;
      });
    }

    // n envs: a bare loop against the VectorEnv, same actions, same work per step.
    const int64_t rounds = std::max<int64_t>(1, config.steps / n);
    {
      std::vector<std::unique_ptr<envs::Env>> bare;
      for (int i = 0; i < n; ++i) bare.push_back(envs::make(id));
      const auto dim = static_cast<size_t>(bare[0]->action_dim());
      const auto actions = random_actions(bare[0]->action_space(), n, 2);
      for (int i = 0; i < n; ++i) bare[static_cast<size_t>(i)]->reset(derive_seed(0, i));
      row.bare_steps_per_s = median_rate(config.repeats, [&] {
        for (int64_t r = 0; r < rounds; ++r) {
          const size_t base = static_cast<size_t>(r % kBatches) * n * dim;
          for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
            envs::Env& e = *bare[i];
            if (e.step(std::span(actions).subspan(base + i * dim, dim)).done()) e.reset();
          }
        }
        return rounds * n;
      });

      auto run_vector = [&](int threads) {
        envs::VectorEnv venv(id, n, {}, threads);
        venv.reset(0);
        const size_t batch = static_cast<size_t>(n) * dim;
        return median_rate(config.repeats, [&] {
          for (int64_t r = 0; r < rounds; ++r)
            venv.step(std::span(actions).subspan(static_cast<size_t>(r % kBatches) * batch, batch));
          return rounds * n;
        });
      };
      row.vector_steps_per_s = run_vector(1);
      if (config.threads > 1) row.threaded_steps_per_s = run_vector(config.threads);
    }
    rows.push_back(row);
  }
  return rows;
}

}  // namespace recur::cli
