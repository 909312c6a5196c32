#!/usr/bin/env bash
# MuJoCo locomotion learning table (issue 34): trains each configs/mujoco/*.yaml on its full
# observation and on its -P (positions only) and -V (velocities only) variants, seeds 0, 1, 2, one
# run at a time, then prints each env's final deterministic evaluation (mean ± sd over seeds), the
# last training iteration's return and the wall time (tools/bench/learning_table.py). Runs land in
# OUT/<config>-<variant>-seed<S>/; a finished run is skipped when the script is run again.
#   tools/bench/mujoco_learning.sh [--recur build/tools/recur] [--steps 1000000] [--out runs/mujoco]
#       [--seeds "0 1 2"] [--variants "full P V"] [CONFIG...]
# Extra --set overrides go in RECUR_SET (e.g. RECUR_SET="run.threads=1").
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/bench/train_once.sh
recur=build/tools/recur steps=1000000 out=runs/mujoco seeds="0 1 2" variants="full P V"
configs=()
while (($#)); do
  case $1 in
    --recur) recur=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --variants) variants=$2; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    -*) echo "mujoco_learning: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) configs+=("$1"); shift ;;
  esac
done
((${#configs[@]})) || configs=(configs/mujoco/*.yaml)
[[ -x $recur ]] || { echo "mujoco_learning: no recur executable at $recur (--recur)" >&2; exit 2; }
mkdir -p "$out"
for variant in $variants; do
  case $variant in full|P|V) ;; *) echo "mujoco_learning: variant '$variant' is not full, P or V" >&2; exit 2 ;; esac
  for config in "${configs[@]}"; do
    name=$(basename "$config" .yaml)
    id=$(sed -n 's/^  id: *//p' "$config" | head -1)
    # HalfCheetah-v4 -> HalfCheetah-P-v4: the variant goes before the version suffix.
    [[ $variant == full ]] || id="${id%-v*}-$variant-v${id##*-v}"
    for seed in $seeds; do
      train_once "$recur" "$config" "$id" "$seed" "$steps" "$out/$name-$variant-seed$seed"
    done
  done
done
python3 tools/bench/learning_table.py "$out"/*/run-*
