// The subcommands of the `recur` executable. Each add_* function registers one subcommand on the
// app; its callback runs the command and stores the process exit code in `exit_code`. Errors are
// thrown (recur::Error and friends) and turned into messages by main() alone.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "core/options.h"

namespace recur::cli {

void add_envs_command(CLI::App& app, int& exit_code);
void add_env_check_command(CLI::App& app, int& exit_code);
void add_demo_command(CLI::App& app, int& exit_code);
void add_bench_command(CLI::App& app, int& exit_code);
void add_info_command(CLI::App& app, int& exit_code);
void add_train_command(CLI::App& app, int& exit_code);
void add_eval_command(CLI::App& app, int& exit_code);
void add_convert_command(CLI::App& app, int& exit_code);

// `-o/--option key=value` pairs into env Options (source named for messages).
Options parse_env_options(const std::vector<std::string>& pairs);

}  // namespace recur::cli
