#include "tools/cli/bench/bench_envs.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <span>
#include <utility>

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

// Busy-waits `us` microseconds on the calling thread: a policy act between two steps.
void simulate_act(int us) {
  if (us <= 0) return;
  const auto until = Clock::now() + std::chrono::microseconds(us);
  while (Clock::now() < until) {
  }
}

// Thread counts ascending, each once.
std::vector<int> thread_counts(std::vector<int> counts) {
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

// The pool's wait budget from --spin-us (when given), then the envs reset.
void prepare(envs::VectorEnv& v, const EnvBenchConfig& config) {
  if (config.spin_us >= 0 && v.worker_pool())
    v.worker_pool()->set_wait_budget(
        {std::chrono::microseconds(config.spin_us), std::chrono::microseconds(config.spin_us)});
  v.reset(0);
}

// `repeats` timings of a and of b, alternating (so a load change on a shared machine hits both
// alike); the median of each.
std::pair<double, double> alternating_medians(int repeats, const std::function<double()>& a,
                                              const std::function<double()>& b) {
  std::vector<double> ra, rb;
  for (int r = 0; r < repeats; ++r) {
    ra.push_back(a());
    rb.push_back(b());
  }
  std::sort(ra.begin(), ra.end());
  std::sort(rb.begin(), rb.end());
  return {ra[ra.size() / 2], rb[rb.size() / 2]};
}

// The scaling table: at each thread count, VectorEnvs on the static and the dynamic schedule,
// timed in alternating repetitions (so a load change on a shared machine hits both alike); only
// the time inside step() counts, the simulated act between steps does not.
std::vector<EnvScalingRow> bench_scaling(const std::string& id, const EnvBenchConfig& config,
                                         std::span<const float> actions, size_t batch,
                                         int64_t rounds) {
  std::vector<int> counts = config.threads;
  counts.push_back(1);
  std::vector<EnvScalingRow> rows;
  for (const int k : thread_counts(counts)) {
    using Schedule = envs::VectorEnv::Schedule;
    envs::VectorEnv fixed(id, config.num_envs, {}, k), dynamic(id, config.num_envs, {}, k);
    fixed.set_schedule(Schedule::kStatic);
    dynamic.set_schedule(Schedule::kDynamic, config.chunks_per_thread);
    prepare(fixed, config);
    prepare(dynamic, config);
    auto timed = [&](envs::VectorEnv& v) {
      double inside = 0;
      for (int64_t r = 0; r < rounds; ++r) {
        simulate_act(config.act_us);
        const auto t0 = Clock::now();
        v.step(actions.subspan(static_cast<size_t>(r % kBatches) * batch, batch));
        inside += std::chrono::duration<double>(Clock::now() - t0).count();
      }
      return static_cast<double>(rounds * config.num_envs) / inside;
    };
    const auto [fixed_rate, dynamic_rate] = alternating_medians(
        config.repeats, [&] { return timed(fixed); }, [&] { return timed(dynamic); });
    rows.push_back({k, fixed_rate, dynamic_rate});
  }
  return rows;
}

// The double-buffering table: the actor loop's two shapes (agent/actor_loop.h) with a simulated
// act, timed over the whole loop (act included), one group and two alternating by repetition.
std::vector<EnvGroupsRow> bench_groups(const std::string& id, const EnvBenchConfig& config,
                                       std::span<const float> actions, size_t batch,
                                       int64_t rounds) {
  std::vector<EnvGroupsRow> rows;
  const int n = config.num_envs, half = n / 2;
  for (const int k : thread_counts(config.threads)) {
    envs::VectorEnv one(id, n, {}, k), two(id, n, {}, k);
    prepare(one, config);
    prepare(two, config);
    auto loop_one = [&] {
      const auto t0 = Clock::now();
      for (int64_t r = 0; r < rounds; ++r) {
        simulate_act(config.act_us);
        one.step(actions.subspan(static_cast<size_t>(r % kBatches) * batch, batch));
      }
      return static_cast<double>(rounds * n) /
             std::chrono::duration<double>(Clock::now() - t0).count();
    };
    auto loop_two = [&] {
      const auto t0 = Clock::now();
      simulate_act(config.act_us);  // group A's first act
      for (int64_t r = 0; r < rounds; ++r) {
        const auto a = actions.subspan(static_cast<size_t>(r % kBatches) * batch, batch);
        two.start_step_range(0, half, a);
        simulate_act(config.act_us);  // group B's act
        two.finish_step();
        two.start_step_range(half, n, a);
        if (r + 1 < rounds) simulate_act(config.act_us);  // group A's next act
        two.finish_step();
      }
      return static_cast<double>(rounds * n) /
             std::chrono::duration<double>(Clock::now() - t0).count();
    };
    const auto [one_rate, two_rate] = alternating_medians(config.repeats, loop_one, loop_two);
    rows.push_back({k, one_rate, two_rate});
  }
  return rows;
}

}  // namespace

std::vector<EnvBenchRow> bench_envs(const EnvBenchConfig& config) {
  RECUR_CHECK(config.steps >= 1000 && config.num_envs >= 1 && config.repeats >= 1,
              "bench envs: need steps >= 1000, num_envs >= 1, repeats >= 1");
  RECUR_CHECK(!config.threads.empty() &&
                  *std::min_element(config.threads.begin(), config.threads.end()) >= 1,
              "bench envs: --threads needs thread counts >= 1, e.g. --threads 1,2,4");
  RECUR_CHECK(config.chunks_per_thread >= 1 && config.act_us >= 0,
              "bench envs: need --chunks-per-thread >= 1 and --act-us >= 0");
  RECUR_CHECK(!config.groups || config.num_envs >= 2,
              "bench envs --groups: needs --num-envs >= 2 (two groups of envs)");
  const bool scaling =
      std::any_of(config.threads.begin(), config.threads.end(), [](int k) { return k > 1; });
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

      {
        envs::VectorEnv venv(id, n);
        venv.reset(0);
        const size_t batch = static_cast<size_t>(n) * dim;
        row.vector_steps_per_s = median_rate(config.repeats, [&] {
          for (int64_t r = 0; r < rounds; ++r)
            venv.step(std::span(actions).subspan(static_cast<size_t>(r % kBatches) * batch, batch));
          return rounds * n;
        });
      }
      if (scaling)
        row.scaling = bench_scaling(id, config, actions, static_cast<size_t>(n) * dim, rounds);
      if (config.groups)
        row.groups = bench_groups(id, config, actions, static_cast<size_t>(n) * dim, rounds);
    }
    rows.push_back(row);
  }
  return rows;
}

}  // namespace recur::cli
