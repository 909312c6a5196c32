// `recur demo`: a random policy on an env, printing each episode's return (the main job until
// training lands; also the baseline return any trained policy must beat).
#include <cmath>
#include <memory>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "agent/random_rollout.h"
#include "tools/commands.h"

namespace recur::cli {

void add_demo_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("demo", "Run a random policy and print episode returns");
  struct Args {
    agent::RandomRolloutConfig config;
    std::vector<std::string> options;
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
  cmd->callback([args, &exit_code] {
    auto& [config, options] = *args;
    config.env_options = parse_env_options(options);
    spdlog::info("random policy on {} ({} envs, seed {})", config.env_id, config.num_envs,
                 config.seed);
    const auto episodes = agent::run_random_rollout(config, [](const agent::EpisodeRecord& e) {
      fmt::print("episode  env {:>3}  return {:>10.3f}  length {:>5}{}\n", e.env_index,
                 e.episode_return, e.length, e.truncated ? "  (truncated)" : "");
    });
    double sum = 0, sq = 0;
    for (const auto& e : episodes) sum += e.episode_return;
    const double mean = sum / static_cast<double>(episodes.size());
    for (const auto& e : episodes) sq += (e.episode_return - mean) * (e.episode_return - mean);
    fmt::print("{} episodes: return {:.3f} +- {:.3f}\n", episodes.size(), mean,
               std::sqrt(sq / static_cast<double>(episodes.size())));
    exit_code = 0;
  });
}

}  // namespace recur::cli
