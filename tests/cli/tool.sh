#!/usr/bin/env bash
# recur --help and recur info (tests/cli/lib.sh says how cases run).
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"

# The help lists the commands.
case_help() {
  run_ok recur --help
  expect_text '(?s)envs.*env-check'
}

# Bad arguments exit 2 as recur's own input errors do, whatever CLI11 calls them (its own codes
# were 105 for a value out of range, 106 for a missing argument, 109 for an extra one); --help
# and --version exit 0.
case_parse_errors_exit_2() {
  run_status 2 recur demo --num-envs 0
  expect_text '--num-envs'
  run_status 2 recur train
  expect_text 'config'
  run_status 2 recur info --no-such-flag
  expect_text 'no-such-flag'
  run_ok recur --version
  expect_text 'recur [0-9]+\.[0-9]+'
  run_ok recur train --help
}

# The build report names the libraries.
case_info() {
  run_ok recur info
  expect_text 'Eigen'
}

# Every key the config parser accepts is documented in docs/CONFIG.md, in its section's table: the
# parser's own list (the "unknown key" error names a section's keys) against the first column of
# the tables (a cell may name several keys, "`actor_lr` / `critic_lr`").
case_config_keys_documented() {
  local section keys doc key missing=""
  for section in env policy algo offpolicy run device dist; do
    run_status 2 recur train "$CONFIGS/cartpole_novel.yaml" --set "$section.no_such_key=1"
    keys=$(sed -n "s/.*Keys in section $section: \(.*\) (docs\/CONFIG.md).*/\1/p" <<<"$(last_output)" | tr -d ',')
    [[ -n $keys ]] || fail "no key list for section $section in: $(last_output)"
    doc=$(awk -v h="## \`$section\`" '$0 == h { f = 1; next } /^## / { f = 0 } f && /^\| `/' \
      "$SRC/docs/CONFIG.md" | cut -d'|' -f2 | grep -o "\`[a-z_0-9]*\`" | tr -d '`')
    for key in $keys; do
      grep -qx -- "$key" <<<"$doc" || missing+=" $section.$key"
    done
  done
  [[ -z $missing ]] || fail "keys missing from docs/CONFIG.md:$missing"
  note "every config key is in docs/CONFIG.md"
  expect_text 'every config key is in docs/CONFIG.md'
}

main "$@"
