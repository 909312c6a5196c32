#!/usr/bin/env bash
# recur train with algo.type sac | td3 as a user runs it, on tiny budgets: the run directory,
# evaluation, resume and ONNX export of the actor; bad combinations exit 2 before a run directory
# is written. Learning is in docs/PERFORMANCE.md; the math in tests/agent/offpolicy/.
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"

tiny=(--set run.total_env_steps=800 --set env.num_envs=2 --set offpolicy.learning_starts=200
  --set offpolicy.batch_size=4 --set offpolicy.seq_len=8 --set offpolicy.steps_per_iteration=200
  --set run.eval_every=400 --set run.eval_episodes=1 --set run.final_eval_episodes=1
  --set policy.hidden=8 --set policy.encoder=[8] --set policy.head=[8])

no_run_dir() {
  [[ -z $(ls -A "$tmp/runs" 2>/dev/null) ]] || fail "a run directory was written: $(ls "$tmp/runs")"
}

# SAC on a Box env: trains, logs SB3's tags' columns, evaluates, resumes past its budget.
case_offpolicy_sac_train_eval_resume() {
  run_ok recur --log-level warn train "$CONFIGS/pendulum_novel_sac.yaml" "${tiny[@]}" \
    --set "run.output_dir=$tmp/runs"
  local run_dir
  run_dir=$(echo "$tmp"/runs/pendulum_novel_sac-*)
  head -1 "$run_dir/progress.csv" >header.txt
  run cat header.txt
  expect_text 'critic_loss,actor_loss,ent_coef,ent_coef_loss,entropy,q_mean,n_updates,replay_size'
  [[ -s $run_dir/checkpoints/latest.safetensors ]] || fail "no latest checkpoint"
  compgen -G "$run_dir/checkpoints/algorithm_state-*.safetensors" >/dev/null ||
    fail "no algorithm state (replay buffer) beside the checkpoint"
  run_ok recur eval "$run_dir" --episodes 2 --deterministic --json
  expect_text '"episodes": 2'
  run_ok recur --log-level info train --resume "$run_dir" --set run.total_env_steps=1200
  expect_text 'replay buffer of [0-9]+ transitions'
}

# TD3 with stored state and burn-in, and discrete SAC: one tiny run each.
case_offpolicy_td3_stored_state() {
  run_ok recur --log-level warn train "$CONFIGS/pendulum_novel_td3.yaml" "${tiny[@]}" \
    --set offpolicy.stored_state=true --set offpolicy.burn_in=4 --set "run.output_dir=$tmp/runs"
  compgen -G "$tmp/runs/pendulum_novel_td3-*/checkpoints/latest.safetensors" >/dev/null ||
    fail "no checkpoint"
}

case_offpolicy_discrete_sac() {
  run_ok recur --log-level warn train "$CONFIGS/cartpole_novel_sac.yaml" "${tiny[@]}" \
    --set "run.output_dir=$tmp/runs"
  run_ok recur eval "$tmp"/runs/cartpole_novel_sac-* --episodes 2 --json
  expect_text '"episodes": 2'
}

case_offpolicy_td3_discrete() {
  run_status 2 recur train "$CONFIGS/cartpole_novel_sac.yaml" --set algo.type=td3 \
    --set "run.output_dir=$tmp/runs"
  expect_text 'algo.type = td3 needs a Box action space, but CartPoleNoVel-v1 acts in Discrete\(2\)'
  no_run_dir
}

case_offpolicy_burn_in_too_long() {
  run_status 2 recur train "$CONFIGS/pendulum_novel_sac.yaml" --set offpolicy.burn_in=32 \
    --set "run.output_dir=$tmp/runs"
  expect_text 'offpolicy.burn_in = 32 is out of range: it must be >= 0 and less than offpolicy.seq_len = 32'
  no_run_dir
}

case_offpolicy_buffer_too_small() {
  run_status 2 recur train "$CONFIGS/pendulum_novel_sac.yaml" --set offpolicy.buffer_size=100 \
    --set "run.output_dir=$tmp/runs"
  expect_text 'offpolicy.buffer_size = 100 is out of range: it must be at least one batch'
  no_run_dir
}

case_offpolicy_normalize_obs() {
  run_status 2 recur train "$CONFIGS/pendulum_novel_sac.yaml" --set env.normalize_obs=true \
    --set "run.output_dir=$tmp/runs"
  expect_text 'env.normalize_obs = true is not supported with algo.type = sac'
  no_run_dir
}

# A resume whose replay was stored for another core shape is refused, naming the mismatch.
case_offpolicy_resume_other_core() {
  recur --log-level warn train "$CONFIGS/pendulum_novel_td3.yaml" "${tiny[@]}" \
    --set offpolicy.stored_state=true --set "run.output_dir=$tmp/runs" >/dev/null
  run_status 2 recur train --resume "$tmp"/runs/pendulum_novel_td3-* --set policy.hidden=16
  expect_text 'hidden|state'
}

main "$@"
