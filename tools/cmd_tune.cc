// `recur tune CONFIG [options]`: hyperparameter search with Optuna. The tuner is Python
// (tools/python/recur/tune.py, `python3 -m recur.tune`); this command checks that the interpreter
// can import it and Optuna, then replaces itself with it, passing every argument through and
// `--recur <this executable>` first, so that the trials train with this very binary (a later
// `--recur` wins). $RECUR_PYTHON names the interpreter (default python3 on PATH).
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/error.h"
#include "tools/commands.h"

namespace recur::cli {
namespace {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Empty when `python` imports recur.tune and optuna; else the last line Python printed.
std::string import_problem(const std::string& python) {
  const std::string cmd = shell_quote(python) + " -c 'import recur.tune, optuna' 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return fmt::format("cannot run {}: {}", python, std::strerror(errno));
  std::string output;
  char buf[512];
  while (std::fgets(buf, sizeof buf, pipe)) output += buf;
  const int status = pclose(pipe);
  if (status == 0) return "";
  while (!output.empty() && output.back() == '\n') output.pop_back();
  const auto last = output.rfind('\n');
  std::string line = last == std::string::npos ? output : output.substr(last + 1);
  if (line.empty()) line = fmt::format("{} exited with status {}", python, status);
  return line;
}

}  // namespace

void add_tune_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "tune", "Tune hyperparameters with Optuna (runs python3 -m recur.tune; --help: its options)");
  // Every argument, --help included, belongs to the Python tuner.
  cmd->prefix_command();
  cmd->set_help_flag();
  cmd->callback([cmd, &exit_code] {
    const char* env = std::getenv("RECUR_PYTHON");
    const std::string python = env && *env ? env : "python3";
    const std::string problem = import_problem(python);
    RECUR_CHECK(problem.empty(),
                "recur tune runs `{} -m recur.tune`, which cannot import recur.tune and optuna "
                "({}). Install both: pip install ./tools/python optuna (from the repository root), "
                "or use a build tree: PYTHONPATH=build-py/tools/python after "
                "bash tools/test-python.sh; RECUR_PYTHON picks another interpreter",
                python, problem);
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    std::vector<std::string> args = {python, "-m", "recur.tune"};
    if (!ec) args.insert(args.end(), {"--recur", self.string()});
    for (const auto& a : cmd->remaining()) args.push_back(a);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::fflush(stdout);
    std::fflush(stderr);
    execvp(python.c_str(), argv.data());
    exit_code = 2;
    RECUR_CHECK(false, "recur tune: cannot run {}: {}", python, std::strerror(errno));
  });
}

}  // namespace recur::cli
