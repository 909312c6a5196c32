// `recur train CONFIG [--set k=v]... [--plugin PATH]... [--print-config]`: a training job from a
// YAML config, through agent::train (agent/training.h), the call a program makes. Ctrl-C
// (SIGINT; SIGTERM too in a data-parallel rank) finishes the current update, writes a checkpoint
// and exits 130, the shell's code for SIGINT (README, "Exit codes"): `recur tune` tells an
// interrupted run by it.
#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <string>

#include "agent/config/yaml.h"
#include "agent/training.h"
#include "tools/cli/commands.h"

namespace recur::cli {
namespace {
constexpr int kExitInterrupted = 130;  // stopped by Ctrl-C, checkpoint written
}  // namespace

void add_train_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("train", "Train a recurrent policy from a YAML config");
  struct Args {
    std::string config;
    agent::TrainOptions options;
    bool print_config = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("config", args->config,
                  "YAML config, e.g. configs/cartpole_novel.yaml (not with --resume)");
  cmd->add_option("--set", args->options.overrides,
                  "Override a key: section.key=value (repeatable)");
  cmd->add_option("--plugin", args->options.plugins,
                  "Env plugin (shared library) to load, added to env.plugin (repeatable; also "
                  "with --resume)");
  cmd->add_flag("--print-config", args->print_config,
                "Print the resolved config (every value) and exit");
  cmd->add_option("--resume", args->options.resume_dir,
                  "Continue the run in this directory from its latest checkpoint (its "
                  "config.yaml, plus any --set, e.g. a larger run.total_env_steps)");
  cmd->callback([args, &exit_code] {
    if (args->print_config) {
      fmt::print("{}", agent::to_yaml(agent::resolve_train_config(args->config, args->options)));
      exit_code = 0;
      return;
    }
    const agent::TrainResult result = agent::train(args->config, args->options);
    exit_code = result.interrupted ? kExitInterrupted : 0;
    if (result.rank != 0) return;  // a data-parallel run: rank 0 reports for all
    if (result.already_complete) {
      fmt::print(
          "{} is complete: {} env steps, final evaluation in its eval.csv; nothing was "
          "written (set a larger run.total_env_steps to train on)\n",
          result.run_dir.string(), result.env_steps);
    } else if (result.interrupted) {
      fmt::print(
          "interrupted after {} env steps (exit {}); checkpoint written, resume with --resume "
          "{}\n",
          result.env_steps, kExitInterrupted, result.run_dir.string());
    } else {
      const auto& e = result.final_eval;
      fmt::print(
          "final evaluation on {} ({} episodes, deterministic): return {:.2f} +- {:.2f}, "
          "length {:.1f}\n{} env steps in {:.1f} s; run directory {}\n",
          result.config.env.id, e.returns.size(), e.mean_return(), e.std_return(), e.mean_length(),
          result.env_steps, result.seconds, result.run_dir.string());
    }
    if (result.segments.size() > 1) {
      std::string parts;
      for (const double seconds : result.segments)
        parts += fmt::format("{}{:.1f}", parts.empty() ? "" : " + ", seconds);
      fmt::print("trained in {} segments (resumes): {} s\n", result.segments.size(), parts);
    }
    const bool by_training = result.config.run.target_measure == "train_mean";
    const std::string stopped =
        result.stopped_at_target
            ? fmt::format(" (run.stop_at_target: stopped at {} env steps)", result.env_steps)
            : "";
    // run.target_confirm_episodes: a shorter evaluation's hit counted once N more episodes of the
    // same weights reached the target too; an evaluation of N or more (the final one) counts alone.
    const int confirm = result.config.run.target_confirm_episodes;
    const std::string confirmed =
        confirm > 0 ? fmt::format(" (held over at least {} episodes of those weights)", confirm)
                    : "";
    if (result.target && result.target_env_steps)
      fmt::print("target {:.2f} reached at {} env steps, {:.1f} s{}{}\n", *result.target,
                 *result.target_env_steps, result.target_seconds, confirmed,
                 by_training ? "" : stopped);
    else if (result.target)
      fmt::print("target {:.2f} not reached by any evaluation{}\n", *result.target,
                 confirm > 0 ? fmt::format(" held over at least {} episodes", confirm) : "");
    // The peers' criterion (Sample Factory, CleanRL): the mean of the last 100 training episodes.
    if (result.target && result.train_target_env_steps)
      fmt::print(
          "target {:.2f} reached by the mean of the last {} training episodes at {} env "
          "steps, {:.1f} s{}\n",
          *result.target, agent::kReturnWindow, *result.train_target_env_steps,
          result.train_target_seconds, by_training ? stopped : "");
    else if (result.target && !result.interrupted && !result.already_complete)
      fmt::print("target {:.2f} not reached by the mean of the last {} training episodes\n",
                 *result.target, agent::kReturnWindow);
  });
}

}  // namespace recur::cli
