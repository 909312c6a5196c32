// `recur tune CONFIG [options]`: hyperparameter search with Optuna. The tuner is Python
// (tools/python/recur/tune.py, `python3 -m recur.tune`); this command checks that the interpreter
// can import it and Optuna, then replaces itself with it, passing every argument through and
// `--recur <this executable>` first, so that the trials train with this very binary (a later
// `--recur` wins). $RECUR_PYTHON names the interpreter (default python3 on PATH). Without the
// installed package (a plain build tree, where the extension may not be built), the tuner runs
// from this source tree as a script: it needs only Optuna and PyYAML, not the extension.
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
#include "tools/cli/commands.h"

namespace recur::cli {
namespace {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Empty when `python` can run `code`; else the last line Python printed.
std::string import_problem(const std::string& python, const std::string& code) {
  const std::string cmd = shell_quote(python) + " -c " + shell_quote(code) + " 2>&1";
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
    std::vector<std::string> args = {python, "-m", "recur.tune"};
    const std::string problem = import_problem(python, "import recur.tune, optuna");
    if (!problem.empty()) {
      // The source tree's tuner as a script (sys.path[0] is then its folder).
      const std::filesystem::path script = std::filesystem::path(RECUR_TUNER_DIR) / "tune.py";
      const std::string fallback = import_problem(python, "import optuna, yaml");
      RECUR_CHECK(std::filesystem::exists(script) && fallback.empty(),
                  "recur tune runs `{} -m recur.tune` (or {}), but {} ({}). Install Optuna: "
                  "pip install optuna pyyaml (or the package: pip install ./tools/python optuna, "
                  "from the repository root); RECUR_PYTHON picks another interpreter",
                  python, script.string(),
                  std::filesystem::exists(script) ? "cannot import optuna and yaml"
                                                  : "that file is missing",
                  fallback.empty() ? problem : fallback);
      args = {python, script.string()};
    }
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
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
