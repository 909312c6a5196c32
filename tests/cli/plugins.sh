#!/usr/bin/env bash
# Env plugins: the loader and its errors, with tests/envs/plugins/faults/fault_plugin.cc built
# once per fault in $RECUR_PLUGIN_DIR (librecur_test_plugin_<fault>.so). Every bad plugin exits 2
# with a message naming the file and the fault, and writes nothing. (tests/cli/lib.sh says how
# cases run.)
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"

: "${RECUR_PLUGIN_DIR:?the directory of the fault plugins}"
plugin() { echo "$RECUR_PLUGIN_DIR/librecur_test_plugin_$1.so"; }
good=$(plugin good)

case_env_check() {
  run_ok recur env-check Counter-v0 --plugin "$good"
}

case_envs_lists_source() {
  run_ok recur envs --plugin "$good"
  expect_text 'Counter-v0  \[test\]  \(plugin /.*librecur_test_plugin_good.so\)'
}

# plugin_error MESSAGE ARGS...: `recur ARGS` exits 2 and its last line is the error, naming
# MESSAGE (a regex).
plugin_error() {
  local message=$1
  shift
  run_status 2 recur "$@"
  expect_text "error: .*$message.*\n\z"
}

case_error_missing() {
  plugin_error 'env plugin /nonexistent/libnothing.so: no such file' \
    env-check Counter-v0 --plugin /nonexistent/libnothing.so
}

case_error_not_a_library() {
  plugin_error 'it is not an ELF shared library' \
    env-check Counter-v0 --plugin "$SRC/tests/envs/plugins/faults/CMakeLists.txt"
}

case_error_no_entry() {
  plugin_error 'no entry point `recur_env_plugin`' \
    env-check Counter-v0 --plugin "$(plugin no_entry)"
}

case_error_abi() {
  plugin_error 'built against recur 9.9.9 \(plugin ABI 99\), but this is recur 0.1.0 \(plugin ABI 2\)' \
    env-check Counter-v0 --plugin "$(plugin abi)"
}

case_error_clash_builtin() {
  plugin_error "registration failed: env id 'CartPole-v1' is already registered by recur's built-ins" \
    env-check CartPole-v1 --plugin "$(plugin clash_builtin)"
}

case_error_clash_plugins() {
  plugin_error "env id 'SharedCounter-v0' is already registered by plugin /[^ ]*librecur_test_plugin_clash_a.so" \
    envs --plugin "$(plugin clash_a)" --plugin "$(plugin clash_b)"
}

case_error_throw_register() {
  plugin_error '\(fault-test\): registration failed: registration fails on purpose' \
    env-check BrokenCounter-v0 --plugin "$(plugin throw_register)"
}

case_error_throw_ctor() {
  plugin_error "env CtorFailCounter-v0 \(plugin /[^)]*\) threw in its constructor: the counter's constructor fails on purpose" \
    demo --env CtorFailCounter-v0 --plugin "$(plugin throw_ctor)"
}

case_error_throw_reset() {
  plugin_error "env ResetFailCounter-v0 threw in reset\(\): the counter's reset fails on purpose" \
    demo --env ResetFailCounter-v0 --plugin "$(plugin throw_reset)"
}

case_error_throw_step() {
  plugin_error "env Counter-v0 threw in step\(\) at step 3 of its episode: the counter's step fails on purpose" \
    demo --env Counter-v0 -o fail_at=3 --plugin "$good"
}

# A bad plugin in a training config fails before the run directory exists.
case_train_bad_plugin_writes_nothing() {
  run_status 2 recur train "$CONFIGS/cartpole.yaml" --set "env.plugin=$(plugin abi)" \
    --set "run.output_dir=$tmp/runs"
  expect_text 'plugin ABI 99.*\n\z'
  [[ ! -e runs ]] || fail "the run directory was made"
}

# A step that throws mid-run names the env and step.
case_train_step_throws() {
  run_status 2 recur --log-level warn train "$CONFIGS/cartpole.yaml" --set env.id=Counter-v0 \
    --set "env.plugin=$good" --set env.options.fail_at=7 --set "run.output_dir=$tmp"
  expect_text 'env Counter-v0 threw in step\(\) at step 7 of its episode.*\n\z'
}

# Non-finite values (the good plugin's spike_at / nan_obs_at options): huge rewards in a row
# overflow the value loss at the update after env step 2048.
nonfinite_run() {
  recur --log-level warn train "$CONFIGS/cartpole.yaml" --set env.id=Counter-v0 \
    --set "env.plugin=$good" --set env.normalize_reward=false --set run.total_env_steps=4096 \
    --set run.eval_every=1024 --set run.final_eval_episodes=2 "$@"
}

# By default the run stops there (exit 2), names the update, the quantity and the last good
# checkpoint, writes nothing more (latest still holds 2048 steps and loads), and --resume with the
# env fixed finishes.
case_train_nonfinite_stops() {
  run_status 2 nonfinite_run --set env.options.spike_at=300 --set "run.output_dir=$tmp"
  run_ok ls "$tmp"/*/checkpoints
  quiet recur convert show "$tmp"/*/checkpoints/latest.safetensors
  ((status == 0)) || fail "convert show failed on latest.safetensors (exit status $status)"
  note "$(last_output | grep -o 'run.env_steps = [0-9]*')"
  quiet recur --log-level warn train --resume "$tmp"/* --set env.options.spike_at=0
  ((status == 0)) || fail "the resumed run failed (exit status $status)"
  note "$(last_output | grep -o '^4096 env steps')"
  expect_text <<'END'
error: the update at env step 2560 \(epoch 1 of 20, minibatch 1 of 1\): the value loss is non-finite \(policy loss .*value loss inf.*no step was taken.*
The run stopped; nothing was written after the last good checkpoint, .*/checkpoints/latest.safetensors \(2048 env steps\)\. Go on from it with: recur train --resume .*
algorithm_state-1024.safetensors
algorithm_state-2048.safetensors
best.safetensors
latest.safetensors
run.env_steps = 2048
4096 env steps
\z
END
}

# algo.on_nonfinite: skip goes on past the bad rollout, and says what it skipped once.
case_train_nonfinite_skip() {
  quiet nonfinite_run --set env.options.spike_at=300 --set algo.on_nonfinite=skip \
    --set "run.output_dir=$tmp"
  note "$(last_output | grep -o 'skipped 20 of 20 minibatches (algo.on_nonfinite: skip), the first: the update at env step 2560 (epoch 1 of 20, minibatch 1 of 1): the value loss is non-finite\|^4096 env steps')"
  expect_text <<'END'
\Askipped 20 of 20 minibatches.*
4096 env steps
\z
END
}

# A NaN observation names the env index and env step.
case_train_nan_observation() {
  run_status 2 nonfinite_run --set env.options.nan_obs_at=300 --set "run.output_dir=$tmp"
  expect_text 'error: env Counter-v0 \(index 0 of a batch of 8\) returned a non-finite observation \(observation\[0\] = nan\) at env step 2400 of the run.*\n\z'
}

# A run records its plugin (path and SHA-256); eval, record and --resume find it again, and say
# exactly which file is missing or changed; --plugin overrides the record.
case_run_dir_records_plugin() {
  cp "$good" libcounter.so
  recur --log-level warn train "$CONFIGS/cartpole.yaml" --set env.id=Counter-v0 \
    --set "env.plugin=$tmp/libcounter.so" --set run.total_env_steps=512 \
    --set "run.output_dir=$tmp/runs" --set run.final_eval_episodes=2 >/dev/null
  run_ok grep '^  plugin: ' runs/*/config.yaml
  run_ok recur eval runs/* --episodes 2 --deterministic
  recur record runs/* --episodes 1 --dataset-id test/counter-v0 --out "$tmp/data" >/dev/null
  note recorded
  recur --log-level warn train --resume runs/* --set run.total_env_steps=1024 >/dev/null
  note resumed
  echo x >>libcounter.so
  run_fails recur eval runs/* --episodes 1
  recur eval runs/* --episodes 1 --plugin "$good" >/dev/null
  note override-ok
  rm libcounter.so
  run_fails recur eval runs/* --episodes 1
  run_fails recur train --resume runs/*
  expect_text <<'END'
  plugin: \[/.*/libcounter.so\]
.*on Counter-v0 \(2 episodes, deterministic\): return [0-9.]+.*
recorded
resumed
error: .*was trained with the env plugin /.*/libcounter.so \(sha256 [0-9a-f]+\), but that file has changed \(sha256 [0-9a-f]+\).*
override-ok
error: .*was trained with the env plugin /.*/libcounter.so, which no longer exists.*
error: .*libcounter.so.*
\z
END
}

main "$@"
