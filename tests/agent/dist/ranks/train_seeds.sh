#!/usr/bin/env bash
# The main job on 2 ranks x 4 envs (8 in all, as the config's one process), seeds 0, 1 and 2:
# every run writes one run directory and rank 0 reports a final evaluation, and at least 2 of the 3
# seeds reach the config's target (475) in an evaluation. Why 2 of 3 and not one seed's final
# score: a 100k-step PPO run on CartPoleNoVel fails its target on some seeds (52-57 of seeds 0-59
# reach it with one process, docs/PERFORMANCE.md "Small products through LIBXSMM"), and which
# seeds fail moves with every change of float rounding. Broken ranks learn on none.
#   train_seeds.sh MPIRUN... -- RECUR CONFIG
set -euo pipefail
mpirun=()
while [[ $1 != -- ]]; do
  mpirun+=("$1")
  shift
done
shift
recur=$1 config=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
learned=0
for seed in 0 1 2; do
  out=$work/seed$seed
  mkdir -p "$out"
  log=$("${mpirun[@]}" -np 2 "$recur" --log-level warn train "$config" --set dist.backend=mpi \
    --set env.num_envs=4 --set run.seed=$seed --set run.output_dir="$out" 2>&1)
  final=$(grep -c 'final evaluation on CartPoleNoVel-v1 (100 episodes, deterministic)' <<<"$log" || true)
  dirs=$(ls "$out" | wc -l)
  echo "seed $seed: $(grep -E 'final evaluation|target' <<<"$log" | tr '\n' ' ')(run directories: $dirs)"
  if [[ $final != 1 || $dirs != 1 ]]; then
    echo "FAIL: seed $seed: want one final evaluation (rank 0 alone) and one run directory"
    exit 1
  fi
  grep -q 'target 475.00 reached at' <<<"$log" && learned=$((learned + 1))
done
echo "reached the target on $learned of 3 seeds"
[[ $learned -ge 2 ]] || { echo "FAIL: want at least 2 of 3"; exit 1; }
