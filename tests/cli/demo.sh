#!/usr/bin/env bash
# recur demo (tests/cli/lib.sh says how cases run).
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"

case_demo() {
  run_ok recur demo --episodes 3 --seed 1
  expect_text '3 episodes: return'
}

case_demo_heuristic() {
  run_ok recur demo --heuristic --env LunarLander-v3 --episodes 4 --threads 2
  expect_text '4 episodes: return [0-9]'
}

# An env without a heuristic controller: exit 2 and why.
case_demo_no_heuristic() {
  run_status 2 recur demo --heuristic --env CartPole-v1
  expect_text 'CartPole-v1 has no heuristic controller'
}

# A misspelt env option: exit 2 and the closest one.
case_bad_option() {
  run_status 2 recur demo --env Pendulum-v1 -o gg=9
  expect_text "Did you mean 'g'"
}

main "$@"
