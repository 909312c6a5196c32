#!/usr/bin/env bash
# recur --help and recur info (tests/cli/lib.sh says how cases run).
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"

# The help lists the commands.
case_help() {
  run_ok recur --help
  expect_text '(?s)envs.*env-check'
}

# The build report names the libraries.
case_info() {
  run_ok recur info
  expect_text 'Eigen'
}

main "$@"
