#!/usr/bin/env bash
# Time to target of the recurrent cores (issue 37, "the trade-off"): trains each task's config with
# each policy.core on each seed, one run at a time on the CPU actor and learner, stopping at the
# task's target, and prints one row per run: task, core, seed, the env step and the wall seconds
# of the first evaluation at or above the target (or "-" when the budget ran out), the final
# evaluation, and the run's wall time. Every row also lands in OUT/summary.csv.
#   tools/bench/cores_time_to_target.sh [--recur build/tools/recur] [--out runs/cores]
#       [--cores "lstm lstm_ln gru mingru mingru_highway"] [--seeds "0 1 2"] [--tasks "cartpole repeat tmaze lunar"]
# Tasks: cartpole = configs/cartpole_novel.yaml (475, 200k steps); repeat =
# configs/repeat_previous_easy.yaml (0.9 of the optimal 1.0, 500k, evaluated every 25k); tmaze =
# configs/tmaze.yaml (3.8, 200k; the T-maze plugin of build/tests/plugins); lunar =
# configs/lunar_lander_novel.yaml (200, its own 5M budget: hours on 2 cores). Extra --set
# overrides go in RECUR_SET (e.g. RECUR_SET="run.threads=1").
set -euo pipefail
cd "$(dirname "$0")/../.."
recur=build/tools/recur out=runs/cores cores="lstm lstm_ln gru mingru" seeds="0 1 2"
tasks="cartpole repeat"
while (($#)); do
  case $1 in
    --recur) recur=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --cores) cores=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --tasks) tasks=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "cores_time_to_target: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x $recur ]] || { echo "cores_time_to_target: no recur executable at $recur (--recur)" >&2; exit 2; }
mkdir -p "$out"
summary=$out/summary.csv
[[ -f $summary ]] || echo "task,core,seed,target_step,target_seconds,final_return,wall_seconds" >"$summary"

task_args() {  # the config and overrides of a task
  case $1 in
    cartpole) echo "configs/cartpole_novel.yaml --set run.total_env_steps=200000" ;;
    repeat) echo "configs/repeat_previous_easy.yaml --set run.target_return=0.9 --set run.eval_every=25000" ;;
    tmaze) echo "configs/tmaze.yaml --set env.plugin=$PWD/build/tests/plugins/libtmaze_plugin.so" ;;
    lunar) echo "configs/lunar_lander_novel.yaml" ;;
    *) echo "cores_time_to_target: unknown task $1 (cartpole, repeat, tmaze, lunar)" >&2; exit 2 ;;
  esac
}

for task in $tasks; do
  read -r -a args <<<"$(task_args "$task")"
  for core in $cores; do
    for seed in $seeds; do
      name="$task-$core-seed$seed"
      if grep -q "^$task,$core,$seed," "$summary"; then continue; fi
      extra=()
      for kv in ${RECUR_SET:-}; do extra+=(--set "$kv"); done
      log=$out/$name.log
      start=$(date +%s%N)
      "$recur" train "${args[@]}" --set policy.core="$core" --set device.actor=cpu \
        --set device.learner=cpu --set run.seed="$seed" --set run.stop_at_target=true \
        --set run.output_dir="$out" --set run.name="$name" "${extra[@]}" >"$log" 2>&1
      wall=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
      # "target 475.00 reached at 50176 env steps, 2.4 s (...)"
      reached=$(sed -n 's/^target .* reached at \([0-9]*\) env steps, \([0-9.]*\) s.*/\1,\2/p' "$log")
      final=$(sed -n 's/^final evaluation .*: return \([-0-9.]*\) .*/\1/p' "$log")
      row="$task,$core,$seed,${reached:--,-},${final:--},$wall"
      echo "$row" | tee -a "$summary"
    done
  done
done
