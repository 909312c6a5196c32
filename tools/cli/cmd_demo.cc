// `recur demo`: a random policy on an env, printing each episode's return (the baseline return
// any trained policy must beat), or with --heuristic Gymnasium's hand-written controller for a
// Box2D env (the score distribution its port is checked against: docs/PERFORMANCE.md).
#include <cmath>
#include <memory>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "agent/baselines/heuristic.h"
#include "agent/baselines/random.h"
#include "tools/cli/commands.h"

namespace recur::cli {

void add_demo_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("demo", "Run a random policy and print episode returns");
  struct Args {
    agent::RandomRolloutConfig config;
    std::vector<std::string> options;
    bool heuristic = false;
    int threads = 1;
    std::vector<std::string> plugins;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("--env", args->config.env_id, "Env id")->capture_default_str();
  cmd->add_option("-o,--option", args->options, "Env option key=value (repeatable)");
  cmd->add_option("--num-envs", args->config.num_envs, "Envs stepped in lockstep")
      ->check(CLI::Range(1, 1 << 16))
      ->capture_default_str();
  cmd->add_option("--episodes", args->config.episodes, "Episodes to run")
      ->check(CLI::Range(1, 1 << 24))
      ->capture_default_str();
  cmd->add_option("--seed", args->config.seed, "Seed")->capture_default_str();
  cmd->add_flag("--heuristic", args->heuristic,
                "Act with Gymnasium's heuristic controller (LunarLander, BipedalWalker) instead "
                "of at random; episode k is seeded with derive_seed(seed, k)");
  cmd->add_option("--threads", args->threads, "Threads for --heuristic episodes")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  add_plugin_option(cmd, args->plugins);
  cmd->callback([args, &exit_code] {
    auto& [config, options, heuristic, threads, plugins] = *args;
    load_cli_plugins(plugins);
    config.env_options = parse_env_options(options);
    const auto print = [](const agent::EpisodeRecord& e) {
      fmt::print("episode  env {:>3}  return {:>10.3f}  length {:>5}{}\n", e.env_index,
                 e.episode_return, e.length, e.truncated ? "  (truncated)" : "");
    };
    std::vector<agent::EpisodeRecord> episodes;
    if (heuristic) {
      spdlog::info("heuristic controller on {} ({} episodes, {} threads, seed {})", config.env_id,
                   config.episodes, threads, config.seed);
      episodes = agent::run_heuristic_rollout(
          {config.env_id, config.env_options, config.episodes, config.seed, threads});
      for (const auto& e : episodes) print(e);
    } else {
      spdlog::info("random policy on {} ({} envs, seed {})", config.env_id, config.num_envs,
                   config.seed);
      episodes = agent::run_random_rollout(config, print);
    }
    double sum = 0, sq = 0;
    for (const auto& e : episodes) sum += e.episode_return;
    const auto n = static_cast<double>(episodes.size());
    const double mean = sum / n;
    for (const auto& e : episodes) sq += (e.episode_return - mean) * (e.episode_return - mean);
    const double std = std::sqrt(sq / n);
    // The standard error lets two runs' means be compared (Gymnasium's figure, another build).
    fmt::print("{} episodes: return {:.3f} +- {:.3f} (standard error of the mean {:.3f})\n",
               episodes.size(), mean, std, std / std::sqrt(n));
    exit_code = 0;
  });
}

}  // namespace recur::cli
