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
    dir="$out/$name-$difficulty-seed$seed"
    if [[ -f $dir/done ]]; then continue; fi
    rm -rf "$dir"
    mkdir -p "$dir"
    extra=()
    for kv in ${RECUR_SET:-}; do extra+=(--set "$kv"); done
    start=$(date +%s.%N)
    "$recur" train "$config" --set env.id="$id" --set run.seed="$seed" \
      --set run.total_env_steps="$steps" --set run.output_dir="$dir" --set run.name=run \
      --set run.final_eval_episodes=20 "${extra[@]}" >"$dir/train.log" 2>&1 ||
      { echo "popgym_learning: $name $id seed $seed failed; see $dir/train.log" >&2; exit 1; }
    echo "$name $id seed $seed: $(awk "BEGIN{print $(date +%s.%N) - $start}") s" | tee "$dir/done"
  done
done
python3 tools/popgym_mmer.py "$out"/*/run-*
