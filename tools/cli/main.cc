// recur: the command-line tool. main() alone turns exceptions into messages and exit codes:
//   0 success, 1 a check or benchmark verdict failed, 2 bad input (arguments, config, files),
//   3 an internal or device error.
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>

#include "core/error.h"
#include "core/logging.h"
#include "core/version.h"
#include "tools/cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"recur: a runtime for reinforcement-learning agents with recurrent policies"};
  app.set_version_flag("--version", "recur " RECUR_VERSION_STRING);
  app.require_subcommand(1);
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error, critical or off")
      ->capture_default_str();
  app.parse_complete_callback([&] { recur::setup_logging(log_level); });

  int exit_code = 0;
  recur::cli::add_train_command(app, exit_code);
  recur::cli::add_eval_command(app, exit_code);
  recur::cli::add_record_command(app, exit_code);
  recur::cli::add_render_command(app, exit_code);
  recur::cli::add_envs_command(app, exit_code);
  recur::cli::add_env_check_command(app, exit_code);
  recur::cli::add_demo_command(app, exit_code);
  recur::cli::add_bench_command(app, exit_code);
  recur::cli::add_info_command(app, exit_code);
  recur::cli::add_convert_command(app, exit_code);
  recur::cli::add_tune_command(app, exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints the message (or the help, or the version: code 0); its own codes for bad
    // arguments (105 a value out of range, 106 a missing option, ...) become recur's 2.
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const recur::Error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "fatal: {}\n", e.what());
    return 3;
  }
  return exit_code;
}
