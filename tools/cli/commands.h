// The subcommands of the `recur` executable. Each add_* function registers one subcommand on the
// app; its callback runs the command and stores the process exit code in `exit_code`. Errors are
// thrown (recur::Error and friends) and turned into messages by main() alone.
#pragma once

#include <CLI/CLI.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "agent/record/recorder.h"
#include "core/options.h"
#include "policy/device_choice.h"
#include "policy/policy_checkpoint.h"

namespace recur::cli {

void add_envs_command(CLI::App& app, int& exit_code);
void add_env_check_command(CLI::App& app, int& exit_code);
void add_demo_command(CLI::App& app, int& exit_code);
void add_bench_command(CLI::App& app, int& exit_code);
void add_info_command(CLI::App& app, int& exit_code);
void add_train_command(CLI::App& app, int& exit_code);
void add_eval_command(CLI::App& app, int& exit_code);
void add_convert_command(CLI::App& app, int& exit_code);
void add_record_command(CLI::App& app, int& exit_code);
void add_render_command(CLI::App& app, int& exit_code);
void add_tune_command(CLI::App& app, int& exit_code);  // execs python3 -m recur.tune

// `--plugin PATH` (repeatable) on a command that takes an env id, and loading what it names
// (tools/cli/cli_plugins.cc). Each command loads its plugins first thing in its callback.
void add_plugin_option(CLI::App* cmd, std::vector<std::string>& paths);
void load_cli_plugins(const std::vector<std::string>& paths);
// `-o/--option key=value` pairs into env Options (source named for messages).
Options parse_env_options(const std::vector<std::string>& pairs);

// --device cpu|cuda|auto against this build and machine (auto logs what it picked and why).
policy::Device resolve_cli_device(const std::string& value);

// The video flags shared by `recur record` and `recur eval` (cmd_record.cc).
struct VideoArgs {
  std::string dir;       // --video DIR (empty: no video)
  std::string episodes;  // --video-episodes 0,3
  int every = 0;         // --video-every K (0: not given)
  std::string name_prefix = "rl-video";
};
void add_video_options(CLI::App* cmd, VideoArgs& args, const std::string& video_help);
// The schedule the flags ask for (kNone without --video; Gymnasium's capped cubic schedule with
// --video alone); recur::Error for contradictory or dangling flags.
agent::record::VideoSchedule video_schedule(const VideoArgs& args);
// recur::Error when a --video-episodes index is not below `episodes`.
void check_video_schedule(const agent::record::VideoSchedule& schedule, int episodes);

}  // namespace recur::cli
