// `recur tune CONFIG [options]`: hyperparameter search with Optuna. The tuner is the Python
// package recur.tune (tools/python/recur/tune/, `python3 -m recur.tune`); this command checks that
// the interpreter can import it and Optuna, then replaces itself with it, passing every argument
// through and `--recur <this executable>` first, so that the trials train with this very binary
// (a later `--recur` wins). $RECUR_PYTHON names the interpreter (default python3 on PATH).
//
// The tuner's files are found from this executable: installed (`cmake --install`, this is
// <prefix>/bin/recur), in <prefix>/share/recur/python/recur/tune/ and, the search spaces,
// <prefix>/share/recur/tune/; in a build tree, in the source tree (tools/python/recur/tune/,
// configs/tune/). The spaces' directory goes to the tuner as $RECUR_TUNE_SPACES (its default
// --space). Where the interpreter has Optuna and PyYAML but no recur package (an installed tool,
// a plain build tree without the extension), the tuner runs from those files: it needs no
// extension (only `--env-factory` does).
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

namespace fs = std::filesystem;

struct TunerFiles {
  fs::path python_dir;  // holds recur/tune/ (and recur/overrides.py, which it imports)
  fs::path spaces_dir;  // the shipped search spaces, configs/tune/*.yaml
};

// Beside the installed executable (<prefix>/bin/recur: <prefix>/share/recur/), else this build's
// source tree (RECUR_TUNER_DIR, tools/CMakeLists.txt: its tools/python/recur).
TunerFiles find_tuner_files(const fs::path& self) {
  if (!self.empty()) {
    const fs::path share = self.parent_path().parent_path() / "share" / "recur";
    if (fs::is_directory(share / "python" / "recur" / "tune"))
      return {share / "python", share / "tune"};
  }
  const fs::path python_dir = fs::path(RECUR_TUNER_DIR).parent_path();
  return {python_dir, python_dir.parent_path().parent_path() / "configs" / "tune"};
}

// Runs the package recur.tune from the directory given as its first argument without importing
// recur/__init__.py (which loads the extension): `recur` becomes a bare package of that directory.
constexpr const char* kRunFromDirectory =
    "import runpy, sys, types\n"
    "recur = types.ModuleType('recur')\n"
    "recur.__path__ = [sys.argv.pop(1) + '/recur']\n"
    "sys.modules['recur'] = recur\n"
    "runpy.run_module('recur.tune', run_name='__main__', alter_sys=True)\n";

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
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    const TunerFiles files = find_tuner_files(ec ? fs::path() : self);
    if (fs::is_directory(files.spaces_dir))
      ::setenv("RECUR_TUNE_SPACES", files.spaces_dir.c_str(), 1);
    std::vector<std::string> args = {python, "-m", "recur.tune"};
    const std::string problem = import_problem(python, "import recur.tune, optuna");
    if (!problem.empty()) {
      const fs::path package = files.python_dir / "recur" / "tune";
      const bool present = fs::exists(package / "__main__.py");
      const std::string fallback = import_problem(python, "import optuna, yaml");
      RECUR_CHECK(present && fallback.empty(),
                  "recur tune runs `{} -m recur.tune` (or the tuner in {}), but {} ({}). Install "
                  "Optuna: pip install optuna pyyaml (or the package: pip install ./tools/python "
                  "optuna, from the repository root); RECUR_PYTHON picks another interpreter",
                  python, package.string(),
                  present ? "cannot import optuna and yaml" : "that directory is missing",
                  fallback.empty() ? problem : fallback);
      args = {python, "-c", kRunFromDirectory, files.python_dir.string()};
    }
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
