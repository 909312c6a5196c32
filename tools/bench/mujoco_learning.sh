#!/usr/bin/env bash
# MuJoCo locomotion learning table (issue 34): trains each config on its env's full observation
# and on its -P (positions only) and -V (velocities only) variants, seeds 0, 1, 2, one run at a
# time, then prints each env's final deterministic evaluation (mean ± sd over seeds), the last
# training iteration's return and the wall time (tools/bench/learning_table.py). Runs land in
# OUT/<config>-<variant>-seed<S>/ (with --ids, OUT/<config>-<env>-<variant>-seed<S>/); a finished
# run is skipped when the script is run again.
#   tools/bench/mujoco_learning.sh [--recur build/tools/recur] [--steps 1000000] [--out runs/mujoco]
#       [--seeds "0 1 2"] [--variants "full P V"] [--ids "Hopper-v4 ..."] [--jobs 1] [CONFIG...]
# CONFIG defaults to the four PPO-LSTM configs. --ids trains each config at these envs instead of
# its own env.id (a config for any env, as configs/mujoco/sac.yaml); --jobs runs that many at a
# time (for single-threaded runs). Extra --set overrides go in RECUR_SET (e.g.
# RECUR_SET="run.learner_threads=1"). The recurrent SAC table of docs/PERFORMANCE.md:
#   RECUR_SET="run.learner_threads=1" tools/bench/mujoco_learning.sh --out runs/mujoco-sac \
#       --ids "HalfCheetah-v4 Hopper-v4 Walker2d-v4 Ant-v4" --variants "P V" --jobs 2 \
#       configs/mujoco/sac.yaml
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/bench/train_once.sh
recur=build/tools/recur steps=1000000 out=runs/mujoco seeds="0 1 2" variants="full P V" ids="" jobs=1
configs=()
while (($#)); do
  case $1 in
    --recur) recur=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --variants) variants=$2; shift 2 ;;
    --ids) ids=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    -*) echo "mujoco_learning: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) configs+=("$1"); shift ;;
  esac
done
((${#configs[@]})) || configs=(configs/mujoco/{half_cheetah,hopper,walker2d,ant}.yaml)
[[ -x $recur ]] || { echo "mujoco_learning: no recur executable at $recur (--recur)" >&2; exit 2; }
[[ $jobs =~ ^[1-9][0-9]*$ ]] ||
  { echo "mujoco_learning: --jobs '$jobs' is not a positive integer" >&2; exit 2; }
mkdir -p "$out"
running=0
# One run in the background; with --jobs runs already going, first wait for one to end. A failed
# run (train_once names its log) stops the script once the runs still going have ended.
reap() {
  wait -n || { wait; exit 1; }
  running=$((running - 1))
}
launch() {
  ((running < jobs)) || reap
  train_once "$@" &
  running=$((running + 1))
}
for variant in $variants; do
  case $variant in full|P|V) ;; *) echo "mujoco_learning: variant '$variant' is not full, P or V" >&2; exit 2 ;; esac
  for config in "${configs[@]}"; do
    name=$(basename "$config" .yaml)
    for base in ${ids:-$(sed -n 's/^  id: *//p' "$config" | head -1)}; do
      # Hopper-P-v4 -> Hopper-v4 (a config may name a variant), then HalfCheetah-v4 ->
      # HalfCheetah-P-v4: the variant goes before the version suffix.
      base=${base/-P-v/-v} base=${base/-V-v/-v}
      id=$base tag=$name
      [[ -z $ids ]] || tag="$name-${base%-v*}"
      [[ $variant == full ]] || id="${base%-v*}-$variant-v${base##*-v}"
      for seed in $seeds; do
        launch "$recur" "$config" "$id" "$seed" "$steps" "$out/$tag-$variant-seed$seed"
      done
    done
  done
done
while ((running > 0)); do reap; done
python3 tools/bench/learning_table.py "$out"/*/run-*
