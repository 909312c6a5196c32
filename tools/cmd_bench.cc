// `recur bench envs`: env stepping speed (see bench_envs.h). Later issues add `bench` targets for
// executors (step vs sequence) beside it.
#include <fmt/format.h>

#include <memory>

#include "tools/bench_envs.h"
#include "tools/commands.h"

namespace recur::cli {

void add_bench_command(CLI::App& app, int& exit_code) {
  auto* bench =
      app.add_subcommand("bench", "Benchmarks (not tests): figures for docs/PERFORMANCE.md");
  bench->require_subcommand(1);
  auto* cmd = bench->add_subcommand("envs", "Env steps/s per id and VectorEnv overhead");
  struct Args {
    EnvBenchConfig config;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("--env", args->config.ids, "Env ids (repeatable; default: all)");
  cmd->add_option("--steps", args->config.steps, "Env steps per timed repetition")
      ->capture_default_str();
  cmd->add_option("--num-envs", args->config.num_envs, "Envs in the VectorEnv comparison")
      ->check(CLI::Range(1, 1 << 16))
      ->capture_default_str();
  cmd->add_option("--repeats", args->config.repeats, "Timed repetitions (median reported)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  cmd->add_option("--threads", args->config.threads, "Also time a VectorEnv with this many threads")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "One JSON object per env");
  cmd->callback([args, &exit_code] {
    const auto& [config, json] = *args;
    const auto rows = bench_envs(config);
    if (!json) {
      fmt::print("{:<28} {:>12} {:>12} {:>12} {:>9}{}\n", "env", "1 env M/s",
                 fmt::format("bare x{} M/s", config.num_envs), "VectorEnv M/s", "overhead",
                 config.threads > 1
                     ? fmt::format(" {:>12}", fmt::format("{} thr M/s", config.threads))
                     : "");
    }
    for (const auto& r : rows) {
      if (json) {
        fmt::print(
            "{{\"id\": \"{}\", \"single_steps_per_s\": {:.0f}, \"bare_steps_per_s\": {:.0f}, "
            "\"vector_steps_per_s\": {:.0f}, \"vector_overhead\": {:.4f}, "
            "\"threaded_steps_per_s\": {:.0f}, \"num_envs\": {}, \"threads\": {}}}\n",
            r.id, r.single_steps_per_s, r.bare_steps_per_s, r.vector_steps_per_s,
            r.vector_overhead(), r.threaded_steps_per_s, config.num_envs, config.threads);
        continue;
      }
      fmt::print("{:<28} {:>12.2f} {:>12.2f} {:>12.2f} {:>8.1f}%{}\n", r.id,
                 r.single_steps_per_s / 1e6, r.bare_steps_per_s / 1e6, r.vector_steps_per_s / 1e6,
                 100.0 * r.vector_overhead(),
                 config.threads > 1 ? fmt::format(" {:>12.2f}", r.threaded_steps_per_s / 1e6) : "");
    }
    exit_code = 0;
  });
}

}  // namespace recur::cli
