#!/usr/bin/env bash
# Crash safety of every writer (docs/ARCHITECTURE.md "Crash safety"): `recur train`, `recur record
# --video` and `recur eval --video` are killed with SIGKILL at random moments, many times, and each
# time every file that exists must be valid and complete (tests/crash/crash_check.cc says what is
# checked); the next run into the same target leaves no temp file behind; and `--resume` after the
# kills continues the logs without duplicated or lost rows.
#
# usage: kill_loop.sh RECUR CRASH_CHECK CONFIG_DIR [ITERATIONS [SEED]]
# The delays come from bash's RANDOM seeded with SEED (printed first): rerun with the same SEED to
# replay a failure. ITERATIONS (default 24) cycle through train, record and eval. With
# KILL_LOOP_KEEP_GOING=1 a failure is reported and the loop goes on (a count at the end).
set -u
recur=$1 check=$2 configs=$3 iterations=${4:-24} seed=${5:-$((($(date +%s%N) / 1000) % 100000))}
echo "kill loop: $iterations iterations, seed $seed (replay: $0 $recur $check $configs $iterations $seed)"
RANDOM=$seed
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
i=0
failures=0

fail() {
  echo "FAIL at iteration $i (seed $seed): $*"
  for f in "$d"/log "$d"/check; do [[ -s $f ]] && { echo "--- $f"; cat "$f"; }; done
  failures=$((failures + 1))
  [[ ${KILL_LOOP_KEEP_GOING:-} == 1 ]] || exit 1
}
# Runs crash_check with the given arguments; its report goes to $d/check.
check() { "$check" "$@" >"$d/check" 2>&1 || fail "crash_check $*"; }

# Starts "$@" (after a label and a bound) in the background, kills it with SIGKILL after a random
# delay of 0..max_ms ms (it may have finished by then) and waits for it.
kill_after_random_delay() {
  local label=$1 max_ms=$2
  shift 2
  "$@" >"$d/log" 2>&1 &
  local pid=$! ms=$((RANDOM % max_ms))
  sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  echo "  $i: $label killed after ${ms} ms"
}

# A tiny CartPole job: 64 env steps per update (the stride of progress.csv), an evaluation (and
# the latest checkpoint) every 4 updates, a step checkpoint every 8, a video every 2nd evaluation.
train_sets=(--set env.num_envs=4 --set algo.rollout_steps=16 --set algo.epochs=2
  --set run.eval_every=256 --set run.eval_episodes=1 --set run.checkpoint_every=512
  --set run.video_every_evals=2 --set run.final_eval_episodes=1 --set run.tensorboard=true)
stride=64
runs=$d/runs

# A policy for eval --video (a separate run, never killed).
"$recur" --log-level warn train "$configs/cartpole.yaml" "${train_sets[@]}" \
  --set run.total_env_steps=256 --set run.output_dir="$d/policy" >"$d/log" 2>&1 ||
  fail "the policy for eval --video did not train"
policy=$(ls "$d"/policy/*/checkpoints/latest.safetensors)

for ((i = 0; i < iterations; i++)); do
  case $((i % 3)) in
  0) # train: a new run, or a resume of the killed one
    run=$(ls -d "$runs"/cartpole-* 2>/dev/null | head -1)
    if [[ -n $run && -f $run/trainer_state.safetensors && -f $run/checkpoints/latest.safetensors ]]; then
      kill_after_random_delay "train --resume" 3000 "$recur" --log-level warn train --resume "$run" \
        --set run.total_env_steps=100000000
    else
      rm -rf "$runs"  # killed before its first checkpoint: nothing to resume, start again
      kill_after_random_delay train 3000 "$recur" --log-level warn train "$configs/cartpole.yaml" \
        "${train_sets[@]}" --set run.total_env_steps=100000000 --set run.output_dir="$runs"
    fi
    run=$(ls -d "$runs"/cartpole-* 2>/dev/null | head -1)
    [[ -z $run ]] || check run "$run"
    ;;
  1) # record --video with a dataset, killed; then a run that finishes into the same targets
    args=(record --random --env CartPole-v1 --seed "$i" --video "$d/rec/videos" --video-every 1
      --dataset-id recur/kill/random-v0 --out "$d/rec/ds" --overwrite --format both)
    kill_after_random_delay "record --video" 1500 "$recur" "${args[@]}" --episodes 40
    check videos "$d/rec/videos"
    check dataset "$d/rec/ds" recur/kill/random-v0
    "$recur" "${args[@]}" --episodes 2 >"$d/log" 2>&1 || fail "record after the kill failed"
    check videos "$d/rec/videos" --no-temps
    check dataset "$d/rec/ds" recur/kill/random-v0 --no-temps
    ;;
  2) # eval --video, killed; then one that finishes into the same directory
    kill_after_random_delay "eval --video" 1500 "$recur" eval "$policy" --episodes 8 --num-envs 2 \
      --video "$d/eval/videos" --video-every 1
    check videos "$d/eval/videos"
    "$recur" eval "$policy" --episodes 1 --video "$d/eval/videos" >"$d/log" 2>&1 ||
      fail "eval --video after the kill failed"
    check videos "$d/eval/videos" --no-temps
    ;;
  esac
done

# The killed run, resumed to the end: the logs continue where the checkpoint left them.
run=$(ls -d "$runs"/cartpole-* 2>/dev/null | head -1)
if [[ -n $run && -f $run/trainer_state.safetensors && -f $run/checkpoints/latest.safetensors ]]; then
  steps=$("$check" run "$run" | sed -n 's/^env_steps //p')
  "$recur" --log-level warn train --resume "$run" --set run.total_env_steps=$((steps + 512)) \
    >"$d/log" 2>&1 || fail "the final resume failed"
  check run "$run" --finished --stride $stride
  echo "resumed to the end: $(grep -c . "$run/progress.csv") progress lines, $(sed -n 's/^tensorboard: //p' "$d/check")"
fi
[[ $failures -eq 0 ]] || { echo "kill loop: $failures failure(s) in $iterations iterations, seed $seed"; exit 1; }
echo "kill loop passed: $iterations iterations, seed $seed"
