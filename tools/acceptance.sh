#!/usr/bin/env bash
# Learning acceptance (a benchmark, not a CI test): trains each config over several seeds and
# prints a table of the final deterministic evaluation (100 episodes), env steps and wall time.
#   tools/acceptance.sh [CONFIG...]            default: the configs with acceptance targets
#   SEEDS="0 1 2" OUT=runs/acceptance tools/acceptance.sh configs/cartpole_novel.yaml
#   EXTRA="--set device.actor=cuda --set device.learner=cuda" tools/acceptance.sh ...  (more --set)
#   RECUR="bash $PWD/.devbundle/run.sh bin/recur" ...   (the device bundle; pass absolute paths)
set -euo pipefail
cd "$(dirname "$0")/.."
read -r -a recur <<<"${RECUR:-build/tools/recur}"
read -r -a extra <<<"${EXTRA:-}"
[[ -n ${RECUR:-} || -x ${recur[0]} ]] || tools/build.sh
configs=("$@")
((${#configs[@]})) || configs=(configs/cartpole_novel.yaml configs/pendulum_novel.yaml
                              configs/repeat_previous_easy.yaml configs/acrobot.yaml)
seeds=${SEEDS:-"0 1 2"}
out=${OUT:-runs/acceptance}
printf '%-34s %4s %22s %10s %8s\n' config seed "final eval (100 ep)" env_steps wall_s
for cfg in "${configs[@]}"; do
  for seed in $seeds; do
    line=$("${recur[@]}" --log-level warn train "$cfg" --set run.seed="$seed" \
             --set run.output_dir="$out" "${extra[@]}" |
           tr '\n' ' ')
    # "final evaluation on ID (N episodes, deterministic): return M +- S, length L N env steps in T s; ..."
    ret=$(sed -E 's/.*return ([-0-9.]+) \+- ([0-9.]+).*/\1 +- \2/' <<<"$line")
    steps=$(sed -E 's/.* ([0-9]+) env steps in.*/\1/' <<<"$line")
    secs=$(sed -E 's/.*env steps in ([0-9.]+) s.*/\1/' <<<"$line")
    printf '%-34s %4s %22s %10s %8s\n' "$(basename "$cfg")" "$seed" "$ret" "$steps" "$secs"
  done
done
