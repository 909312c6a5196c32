# Sourced by every tests/cli/*.sh: the CLI as a user runs it, one named case per ctest test.
#
#   RECUR=build/tools/recur bash tests/cli/train.sh train_resume_extends
#
# tests/CMakeLists.txt registers each case: the test cli.x (or plugin.x, install.x) runs case x
# of its script, with, in the environment, RECUR (the recur binary) and what some cases need:
# RECUR_PLUGIN_DIR (the fault plugins of tests/envs/plugins/faults), RECUR_TMAZE (the T-maze
# plugin), RECUR_RECORD_RUN and RECUR_TMAZE_RUN (run directories shared by several cases: ctest
# fixtures) and the install cases' CMake settings. Each case runs in a fresh temporary directory,
# $tmp (also the working directory), removed on exit.
#
# A case runs commands with `run` (any exit status), `run_ok` (must exit 0), `run_status N` or
# `run_fails`: their output (stdout and stderr together) is printed and collected. `quiet` only
# prints it (`last_output` gives it back) and `note` adds a line. `expect_text` checks the
# collected output against a Perl regex given as lines (a heredoc): consecutive lines of the
# pattern match consecutive lines of the output, `.` never crosses a line, and a pattern line
# `...` stands for any number of lines; \A and \z anchor at the start and end of the output.
# `expect_no_text` is the opposite. Any other command that fails stops the case with its line
# (set -e and an ERR trap), and so does a failed check, with what was expected.
#
# These cases were one-line `sh -c` tests in CMake. Where one had PASS_REGULAR_EXPRESSION, its
# case's expect_text holds that regex, and the exit status (which ctest then ignored) is checked
# too; FAIL_REGULAR_EXPRESSION became expect_no_text (record.sh record_random_json) and WILL_FAIL
# run_fails (envs.sh env_check_unknown).
set -eEuo pipefail

: "${RECUR:?set RECUR to the recur binary (build/tools/recur)}"
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export CONFIGS=$SRC/configs # for the cases
export DATA=$SRC/tests/data

tmp=$(mktemp -d)
_out=$(mktemp)
_step=$(mktemp)
trap 'rm -rf "$tmp" "$_out" "$_step"' EXIT
trap 'fail "line $LINENO failed (exit status $?): $BASH_COMMAND"' ERR
status=0
case_name="?"

fail() {
  trap - ERR
  printf '\nFAIL %s: %s\n' "$case_name" "$*" >&2
  exit 1
}

# recur ARGS...: the binary under test.
recur() { "$RECUR" "$@"; }

# run CMD...: any exit status; it is left in $status.
run() {
  status=0
  "$@" >"$_step" 2>&1 || status=$?
  cat "$_step" >>"$_out"
  cat "$_step"
}

# quiet CMD...: as run, but the output is only printed, not collected; last_output gives it, to
# collect a part of it with note, e.g. `note "$(last_output | grep -c '^PASS')"`.
quiet() {
  status=0
  "$@" >"$_step" 2>&1 || status=$?
  cat "$_step"
}

last_output() {
  cat "$_step"
}

# run_ok CMD...: CMD must exit 0.
run_ok() {
  run "$@"
  ((status == 0)) || fail "exit status $status, expected 0, from: $*"
}

# run_status N CMD...: CMD must exit N.
run_status() {
  local want=$1
  shift
  run "$@"
  ((status == want)) || fail "exit status $status, expected $want, from: $*"
}

# run_fails CMD...: CMD must exit with a status other than 0.
run_fails() {
  run "$@"
  ((status != 0)) || fail "exit status 0, expected a failure, from: $*"
}

# note TEXT: adds a line of the case's own to the collected output (as `echo` did in the old
# one-line tests), e.g. `note nothing-written`.
note() {
  printf '%s\n' "$*" | tee -a "$_out"
}

_match() {  # exit 0 when the collected output matches the pattern in $_re
  _re=$1 perl -e '
    open(my $f, "<", $ARGV[0]) or die "$ARGV[0]: $!";
    local $/;
    my $text = <$f> // "";
    my @l = split /\n/, $ENV{_re}, -1;
    my $re = "";
    for my $i (0 .. $#l) {
      if ($l[$i] eq "...") { $re .= "(?:.*\\n)*?"; next; }
      $re .= $l[$i];
      $re .= "\n" if $i < $#l;
    }
    exit($text =~ /$re/ ? 0 : 1);' "$_out"
}

# expect_text [PATTERN]: the collected output matches PATTERN (or the heredoc on stdin).
expect_text() {
  local pattern
  if (($#)); then pattern=$1; else pattern=$(cat); fi
  _match "$pattern" || fail "the output does not match:
$pattern"
}

# expect_no_text PATTERN: the collected output does not match PATTERN.
expect_no_text() {
  if _match "$1"; then fail "the output matches what it must not: $1"; fi
}

# main "$@": runs the case named by the first argument (a function case_<name>).
main() {
  local name=${1:-}
  if [[ -z $name ]] || ! declare -F "case_$name" >/dev/null; then
    echo "usage: $0 CASE; cases: $(declare -F | sed -n 's/^declare -f case_//p' | tr '\n' ' ')" >&2
    exit 2
  fi
  case_name="$(basename "$0" .sh) $name"
  cd "$tmp"
  "case_$name"
  echo "ok: $case_name"
}
