#!/usr/bin/env bash
# Resume is exact (docs/ARCHITECTURE.md, "The training job and its algorithms"): a CartPoleNoVel
# run (envs whose state is saved exactly) killed with SIGKILL at random moments and resumed until
# it finishes has the same progress.csv (wall-clock columns aside), eval.csv, TensorBoard scalars
# (wall-clock tags aside) and time to target in env steps as the same run uninterrupted; its
# summary counts one segment per process that saved a checkpoint; and a --resume of the finished
# run says it is complete and writes nothing.
#
# usage: resume_exact.sh RECUR CRASH_CHECK CONFIG_DIR [MAX_KILLS [SEED]]
# The delays come from bash's RANDOM seeded with SEED (printed first): rerun with the same SEED to
# replay a failure.
set -u
recur=$1 check=$2 configs=$3 max_kills=${4:-12} seed=${5:-$((($(date +%s%N) / 1000) % 100000))}
echo "resume exact: up to $max_kills kills, seed $seed (replay: $0 $recur $check $configs $max_kills $seed)"
RANDOM=$seed
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT

fail() {
  echo "FAIL (seed $seed): $*"
  [[ -s $d/log ]] && { echo "--- last log"; tail -n 20 "$d/log"; }
  exit 1
}

# Small updates (64 env steps each), an evaluation every 4 of them, a periodic checkpoint every 8,
# a target low enough to be reached mid-run.
sets=(--set env.num_envs=4 --set algo.rollout_steps=16 --set algo.epochs=2
  --set run.total_env_steps=12288 --set run.eval_every=512 --set run.eval_episodes=2
  --set run.checkpoint_every=1024 --set run.final_eval_episodes=4 --set run.tensorboard=true
  --set run.target_return=20 --set run.seed=5)
train=("$recur" --log-level warn train "$configs/cartpole_novel.yaml" "${sets[@]}")

t0=$(date +%s%N)
"${train[@]}" --set run.output_dir="$d/ref" >"$d/ref.out" 2>"$d/log" || fail "the uninterrupted run failed"
ref_ms=$((($(date +%s%N) - t0) / 1000000))
ref=$(ls -d "$d"/ref/*/)
echo "uninterrupted run: $ref_ms ms"

# The killed run: started, then resumed, each process killed after a random delay within the
# first third of the uninterrupted run's wall time (each process makes some progress, and many
# kills land), until a process finishes (after max_kills kills, one last resume runs to the end).
kills=0
finished=0
for ((i = 0; i <= max_kills; i++)); do
  run=$(ls -d "$d"/cut/*/ 2>/dev/null | head -1)
  # Resumable once both files of the first checkpoint exist (killed between the two, recur says
  # to start a new run).
  if [[ -n $run && -f $run/trainer_state.safetensors && -f $run/checkpoints/latest.safetensors ]]; then
    cmd=("$recur" --log-level warn train --resume "$run")
  else
    rm -rf "$d/cut"  # killed before its first checkpoint was complete: start again
    cmd=("${train[@]}" --set run.output_dir="$d/cut")
  fi
  "${cmd[@]}" >"$d/cut.out" 2>"$d/log" &  # $! is recur itself: SIGKILL reaches it
  pid=$!
  if ((i < max_kills)); then
    ms=$((20 + RANDOM % (ref_ms > 120 ? ref_ms / 3 : 40)))
    sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
    if kill -KILL "$pid" 2>/dev/null; then
      wait "$pid" 2>/dev/null
      kills=$((kills + 1))
      echo "  killed after ${ms} ms"
      continue
    fi
  fi
  wait "$pid" || fail "a ${cmd[4]} process failed (exit $?)"
  finished=1
  break
done
((finished)) || fail "the killed run never finished"
run=$(ls -d "$d"/cut/*/)
echo "killed $kills times"
((kills >= 2)) || fail "only $kills kill(s) landed before the run finished: nothing much was tested"

# Wall-clock columns of progress.csv: time_s, fps, act_time_s, learn_time_s, wait_time_s.
strip_times() {
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i ~ /^(time_s|fps|act_time_s|learn_time_s|wait_time_s)$/) drop[i] = 1 }
    { out = ""; for (i = 1; i <= NF; i++) if (!(i in drop)) out = out (out == "" ? "" : ",") $i; print out }' "$1"
}
diff <(strip_times "$ref/progress.csv") <(strip_times "$run/progress.csv") >"$d/diff" ||
  { cat "$d/diff"; fail "progress.csv differs from the uninterrupted run's"; }
diff "$ref/eval.csv" "$run/eval.csv" >"$d/diff" || { cat "$d/diff"; fail "eval.csv differs"; }
"$check" scalars "$ref/tb" >"$d/ref.tb" || fail "reading the reference's TensorBoard files"
"$check" scalars "$run/tb" >"$d/cut.tb" || fail "reading the resumed run's TensorBoard files"
[[ -s $d/ref.tb ]] || fail "the reference run logged no TensorBoard scalar"
diff "$d/ref.tb" "$d/cut.tb" >"$d/diff" || { head -n 20 "$d/diff"; fail "TensorBoard scalars differ"; }
target() { grep -o 'reached at [0-9]* env steps' "$1"; }
[[ -n $(target "$d/ref.out") ]] || fail "the reference run did not reach its target (test set-up)"
[[ $(target "$d/ref.out") == $(target "$d/cut.out") ]] ||
  fail "time to target: '$(target "$d/ref.out")' uninterrupted, '$(target "$d/cut.out")' resumed"
if ((kills > 0)) && grep -q 'env steps; run directory' "$d/cut.out" &&
  ! grep -q 'trained in [0-9]* segments' "$d/cut.out"; then
  # A resumed process always continues a saved segment, so its summary lists the segments,
  # unless every kill came before the first checkpoint (then the run started afresh).
  grep -q 'resuming' "$d/log" && fail "the resumed run's summary does not list its segments"
fi

# A finished run resumed: complete, nothing written.
before=$(cd "$run" && find . -type f -exec md5sum {} + | sort)
"$recur" --log-level warn train --resume "$run" >"$d/again.out" 2>"$d/log" ||
  fail "--resume of the finished run failed"
grep -q 'is complete' "$d/again.out" || { cat "$d/again.out"; fail "--resume of the finished run did not say it is complete"; }
after=$(cd "$run" && find . -type f -exec md5sum {} + | sort)
[[ $before == "$after" ]] || fail "--resume of the finished run changed files: $(diff <(echo "$before") <(echo "$after"))"
echo "resume exact: passed ($kills kills)"
