# shellcheck shell=bash
# Sourced by the learning-table scripts (popgym_learning.sh, mujoco_learning.sh): one training run
# of a config at an env id and seed, into its own directory, skipped when that directory already
# holds a finished run (its `done` file), so that a table can be resumed by running its script
# again.
#   train_once RECUR CONFIG ENV_ID SEED STEPS DIR [recur train args...]
# Extra --set overrides from RECUR_SET (e.g. RECUR_SET="run.threads=1") go last. A failed run
# stops the calling script, naming its log.
train_once() {
  local recur=$1 config=$2 id=$3 seed=$4 steps=$5 dir=$6
  shift 6
  [[ -f $dir/done ]] && return 0
  rm -rf "$dir"
  mkdir -p "$dir"
  local extra=() kv start name
  for kv in ${RECUR_SET:-}; do extra+=(--set "$kv"); done
  name=$(basename "$config" .yaml)
  start=$(date +%s.%N)
  "$recur" train "$config" --set env.id="$id" --set run.seed="$seed" \
    --set run.total_env_steps="$steps" --set run.output_dir="$dir" --set run.name=run \
    "$@" "${extra[@]}" >"$dir/train.log" 2>&1 ||
    { echo "$(basename "$0" .sh): $name $id seed $seed failed; see $dir/train.log" >&2; exit 1; }
  echo "$name $id seed $seed: $(awk "BEGIN{print $(date +%s.%N) - $start}") s" | tee "$dir/done"
}
