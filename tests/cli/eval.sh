#!/usr/bin/env bash
# recur eval (tests/cli/lib.sh says how cases run; train.sh has train_and_eval).
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"

# Without a GPU (CI) --device cuda fails clearly (exit 2), never crashes, and --device auto
# falls back to the CPU. (On a GPU machine the cuda run would succeed; GPU machines run the
# bundled recur_tests, not ctest: see tools/gpu/bundle.sh.)
case_eval_device_cuda_without_gpu() {
  recur --log-level warn train "$CONFIGS/cartpole.yaml" --set run.total_env_steps=512 \
    --set "run.output_dir=$tmp" --set run.final_eval_episodes=1 >/dev/null 2>&1
  run_status 2 recur eval cartpole-* --episodes 1 --device cuda
  run recur eval cartpole-* --episodes 1 --device auto
  expect_text <<'END'
--device: cuda was asked for, but .*
...
.*--device: auto -> cpu.*
...
.*episodes
END
}

# A small PendulumNoVel run in $tmp (pendulum_novel-*): a policy with a continuous action whose
# env takes options.
train_pendulum_run() {
  recur --log-level warn train "$CONFIGS/pendulum_novel.yaml" --set run.total_env_steps=4096 \
    --set "run.output_dir=$tmp" --set run.final_eval_episodes=1 --set run.eval_every=0 >/dev/null 2>&1
}

# --option sets env options on top of the checkpoint's: the default's value changes nothing,
# another changes the returns, and an unknown key is named with where it came from (by recur
# record too).
case_eval_option() {
  train_pendulum_run
  quiet recur eval pendulum_novel-* --episodes 2 --deterministic --json
  local plain
  plain=$(last_output)
  quiet recur eval pendulum_novel-* --episodes 2 --deterministic --json --option g=10.0
  [[ $(last_output) == "$plain" ]] || fail "--option g=10.0 (the default) gave $(last_output), without it $plain"
  quiet recur eval pendulum_novel-* --episodes 2 --deterministic --json -o g=2.5
  [[ $(last_output) != "$plain" ]] || fail "-o g=2.5 changed nothing: $plain"
  run_status 2 recur eval pendulum_novel-* --episodes 1 -o gg=1
  expect_text "unknown option 'gg' \\(from .*best.safetensors and --option\\)\\. Did you mean 'g'\\?"
  # recur record layers its --option the same way (agent/training.cc: core/options.h layered()).
  run_status 2 recur record pendulum_novel-* --episodes 1 -o gg=1 --dataset-id recur/pendulum/x-v0 \
    --out "$tmp/record"
  expect_text "unknown option 'gg' \\(from .*best.safetensors and --option\\)\\. Did you mean 'g'\\?"
}

# --threads steps the envs on a pool: the same returns as one thread; 0 threads is refused with
# the flag named (exit 2, CLI11's check).
case_eval_threads() {
  train_pendulum_run
  quiet recur eval pendulum_novel-* --episodes 6 --num-envs 3 --threads 1 --json
  local one
  one=$(last_output)
  run_ok recur eval pendulum_novel-* --episodes 6 --num-envs 3 --threads 3 --json
  [[ $(last_output) == "$one" ]] || fail "--threads 3 gave $(last_output), --threads 1 $one"
  run_status 2 recur eval pendulum_novel-* --episodes 1 --threads 0
  expect_text <<'END'
\{"checkpoint": .*"episodes": 6, .*"return_mean": .*\}
--threads: Value 0 not in range 1 to 256
Run with --help for more information.
END
}

# --video with --video-episodes films the episodes named (the shared run of record.sh's
# record_fixture_train).
case_eval_video() {
  : "${RECUR_RECORD_RUN:?the shared run directory (record.sh record_fixture_train)}"
  run_ok recur eval "$RECUR_RECORD_RUN"/cartpole-* --episodes 3 --deterministic \
    --video "$tmp/videos" --video-episodes 0,2
  run_ok ls videos
  expect_text <<'END'
\(3 episodes, deterministic\): return .*; videos 2 in .*/videos
rl-video-episode-0.mp4
rl-video-episode-2.mp4
END
}

main "$@"
