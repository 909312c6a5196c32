#!/usr/bin/env bash
# recur train as a user runs it, on tiny budgets; learning is tested in doctest (tests/cli/lib.sh
# says how cases run).
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"

# Trained, then evaluated as JSON.
case_train_and_eval() {
  run_ok recur --log-level warn train "$CONFIGS/cartpole.yaml" --set run.total_env_steps=512 \
    --set "run.output_dir=$tmp" --set run.final_eval_episodes=2
  run_ok recur eval cartpole-* --episodes 3 --deterministic --json
  expect_text '"episodes": 3'
}

# Ctrl-C in async mode: the pending rollout is trained on, a checkpoint written, exit code 130
# (std::jthread joins the actor thread; a thread left running would abort the process).
case_train_async_sigint() {
  # "$RECUR" itself, not the recur function: $! must be recur's pid, not a subshell's.
  "$RECUR" --log-level warn train "$CONFIGS/cartpole_novel.yaml" --set algo.async=true \
    --set run.total_env_steps=100000000 --set "run.output_dir=$tmp" >train.log 2>&1 &
  local pid=$!
  sleep 3
  kill -INT "$pid"
  local rc=0
  wait "$pid" || rc=$?
  run cat train.log
  expect_text 'interrupted after [0-9]+ env steps'
  ((rc == 130)) || fail "exit status $rc after SIGINT, expected 130 (interrupted, checkpoint written)"
  compgen -G "$tmp/*/checkpoints/latest.safetensors" >/dev/null ||
    fail "no checkpoints/latest.safetensors after SIGINT"
}

case_train_config_error() {
  run_status 2 recur train "$CONFIGS/cartpole.yaml" --set algo.learning_rat=1
  expect_text "Did you mean 'algo.learning_rate'"
}

case_train_cuda_unavailable() {
  run_status 2 recur train "$CONFIGS/cartpole.yaml" --set device.learner=cuda
  expect_text 'device.learner: cuda was asked for, but (this build of recur has no CUDA support|this machine has no usable GPU)'
}

# --resume with a larger budget continues the run to it, with evaluations on the schedule: the
# final evaluation at 512 stands in for the periodic one there, so the next is due at 1024 (the
# new final one), not at the first update after the resume (768, 256 env steps per update).
case_train_resume_extends() {
  run_ok recur --log-level warn train "$CONFIGS/cartpole.yaml" --set run.total_env_steps=512 \
    --set "run.output_dir=$tmp" --set run.final_eval_episodes=2 --set run.eval_every=512 \
    --set run.eval_episodes=2
  run_ok recur --log-level warn train --resume cartpole-* --set run.total_env_steps=1024
  run_ok tail -1 cartpole-*/progress.csv
  run_ok cut -d, -f1 cartpole-*/eval.csv
  expect_text <<'END'
final evaluation.*
...
1024,.*
...
env_steps
512
1024
END
}

# --plugin: each path made absolute and added to env.plugin once (three spellings of one file
# give one entry), on a new run and on --resume.
case_train_plugin_option() {
  : "${RECUR_PLUGIN_DIR:?the directory of the fault plugins}"
  cp "$RECUR_PLUGIN_DIR/librecur_test_plugin_good.so" libcounter.so
  local config
  config=$(recur train "$CONFIGS/cartpole.yaml" --plugin libcounter.so \
    --plugin ./libcounter.so --plugin "$tmp/libcounter.so" --print-config)
  note "$(grep '^  plugin: ' <<<"$config")"
  recur --log-level warn train "$CONFIGS/cartpole.yaml" --plugin libcounter.so \
    --set env.id=Counter-v0 --set run.total_env_steps=512 --set "run.output_dir=$tmp/runs" \
    --set run.final_eval_episodes=2 >/dev/null
  local resumed
  resumed=$(recur --log-level warn train --resume runs/* --plugin "$tmp/libcounter.so" \
    --set run.total_env_steps=1024)
  note "$(grep -o '^1024 env steps' <<<"$resumed")"
  note "$(grep '^  plugin: ' runs/*/config.yaml)"
  expect_text <<'END'
\A  plugin: \[/.*/libcounter.so\]
1024 env steps
  plugin: \[/.*/libcounter.so\]
\z
END
}

main "$@"
