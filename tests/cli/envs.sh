#!/usr/bin/env bash
# recur envs and recur env-check (tests/cli/lib.sh says how cases run).
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"

case_envs() {
  run_ok recur envs
  expect_text '(?s)CartPoleNoVel-v1.*RepeatPreviousHard-v0'
}

case_env_check() {
  run_ok recur env-check CartPole-v1
  expect_text 'all checks passed'
}

# An unknown id fails (the old test was WILL_FAIL: any non-zero status).
case_env_check_unknown() {
  run_fails recur env-check CartPol-v1
}

# ... and says which ids are close (any exit status here; the one above checks it).
case_env_check_unknown_message() {
  run recur env-check CartPol-v1
  expect_text 'Closest known ids: CartPole-v1'
}

# Every Box2D env passes every check.
case_env_check_box2d() {
  local id
  for id in LunarLander-v3 LunarLanderContinuous-v3 LunarLanderNoVel-v3 \
    LunarLanderContinuousNoVel-v3 BipedalWalker-v3 BipedalWalkerHardcore-v3; do
    run_ok recur env-check "$id"
  done
  expect_text 'all checks passed'
}

main "$@"
