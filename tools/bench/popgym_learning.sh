#!/usr/bin/env bash
# POPGym learning table: trains every configs/popgym/*.yaml (each at its Medium id) on seeds 0, 1,
# 2 with a common budget, one run at a time, then prints POPGym's MMER per env beside the wall time
# (tools/popgym_mmer.py). The runs land in OUT/<config>-seed<S>/.
#   tools/bench/popgym_learning.sh [--recur build/tools/recur] [--steps 1000000] [--out runs/popgym]
#       [--seeds "0 1 2"] [--difficulty Medium] [CONFIG...]
# --difficulty Easy|Hard replaces "Medium" in each config's env id. Extra --set overrides go in
# RECUR_SET (e.g. RECUR_SET="run.threads=2").
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/bench/train_once.sh
recur=build/tools/recur steps=1000000 out=runs/popgym seeds="0 1 2" difficulty=Medium
configs=()
while (($#)); do
  case $1 in
    --recur) recur=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --difficulty) difficulty=$2; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    -*) echo "popgym_learning: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) configs+=("$1"); shift ;;
  esac
done
((${#configs[@]})) || configs=(configs/popgym/*.yaml)
[[ -x $recur ]] || { echo "popgym_learning: no recur executable at $recur (--recur)" >&2; exit 2; }
mkdir -p "$out"
for config in "${configs[@]}"; do
  name=$(basename "$config" .yaml)
  id=$(sed -n 's/^  id: *//p' "$config" | head -1)
  id=${id/Medium/$difficulty}
  for seed in $seeds; do
    train_once "$recur" "$config" "$id" "$seed" "$steps" "$out/$name-$difficulty-seed$seed" \
      --set run.final_eval_episodes=20
  done
done
python3 tools/popgym_mmer.py "$out"/*/run-*
