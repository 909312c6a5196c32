#!/usr/bin/env bash
# Data-parallel faults, as a user meets them (tests/agent/dist/ranks/CMakeLists.txt runs each mode):
#   kill      SIGKILL one rank mid-run: the job ends promptly with a non-zero status, the latest
#             checkpoint stays loadable, and --resume on 2 ranks finishes the run
#   hang      SIGSTOP one rank: its peer gives up after dist.timeout_s, naming the collective,
#             and the job ends (status 3)
#   throw     one rank's env throws: the job ends with status 2, naming the rank and the env
#   config    ranks started with different --set: refused before training, naming the key
#   world     resuming a 2-rank run on 1 rank: refused, saying how many ranks to use
# usage: faults.sh MODE RECUR MPIEXEC CONFIG_DIR [PLUGIN]
set -u
mode=$1 recur=$2 mpiexec=$3 configs=$4 plugin=${5:-}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
mpi=("$mpiexec" --allow-run-as-root --oversubscribe)
cfg=$configs/cartpole_novel.yaml
sets=(--set dist.backend=mpi --set env.num_envs=4 --set run.output_dir=$d/runs --set run.final_eval_episodes=2)

# Waits up to $2 seconds for background process $1 to end; sets rc to its status (or "alive").
# (Not in a $(...) subshell: only this shell can wait for its own child.)
wait_for() {
  local pid=$1 limit=$2 waited=0
  while kill -0 "$pid" 2>/dev/null; do
    sleep 0.2
    waited=$((waited + 1))
    if ((waited > limit * 5)); then rc=alive; return; fi
  done
  wait "$pid"
  rc=$?
}

# The pid of rank $2 among the children of mpirun $1 (its environment names the rank).
rank_pid() {
  local p
  for p in $(pgrep -P "$1"); do
    if tr '\0' '\n' </proc/"$p"/environ 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2"; then
      echo "$p"
      return
    fi
  done
}

# Starts a long 2-rank run in the background and waits for its first checkpoint.
start_long_run() {
  "${mpi[@]}" -np 2 "$recur" train "$cfg" "${sets[@]}" --set run.total_env_steps=100000000 \
    --set run.eval_every=2048 --set run.eval_episodes=1 "$@" >"$d/log" 2>&1 &
  job=$!
  for _ in $(seq 300); do
    ls "$d"/runs/*/checkpoints/latest.safetensors >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "no checkpoint after 30 s"; cat "$d/log"; exit 1
}

case $mode in
kill)
  start_long_run
  victim=$(rank_pid "$job" 1)
  [[ -n $victim ]] || { echo "rank 1 not found"; exit 1; }
  sleep 1
  t0=$(date +%s)
  kill -9 "$victim"
  wait_for "$job" 60
  echo "after SIGKILL of rank 1: mpirun status $rc in $(($(date +%s) - t0)) s"
  [[ $rc != alive && $rc != 0 ]] || exit 1
  run=$(ls -d "$d"/runs/*)
  "$recur" eval "$run" --episodes 2 --deterministic || exit 1
  steps=$(tail -1 "$run/progress.csv" | cut -d, -f1)
  "${mpi[@]}" -np 2 "$recur" --log-level warn train --resume "$run" \
    --set run.total_env_steps=$((steps + 8192)) || exit 1
  echo "resumed to $(tail -1 "$run/progress.csv" | cut -d, -f1) env steps"
  ;;
hang)
  start_long_run --set dist.timeout_s=3
  victim=$(rank_pid "$job" 1)
  [[ -n $victim ]] || { echo "rank 1 not found"; exit 1; }
  kill -STOP "$victim"
  wait_for "$job" 60
  kill -9 "$victim" 2>/dev/null
  echo "after SIGSTOP of rank 1: mpirun status $rc"
  grep -o "rank 0 of 2: waited [0-9]* s in [^:]*" "$d/log" | head -1
  [[ $rc == 3 ]] || { cat "$d/log"; exit 1; }
  ;;
throw)
  "${mpi[@]}" -np 2 "$recur" train "$cfg" "${sets[@]}" --set env.id=RankCounter-v0 \
    --set env.plugin="$plugin" --set env.options.fail_at=300 --set run.total_env_steps=100000 \
    >"$d/log" 2>&1 &
  wait_for $! 60
  echo "status $rc"
  grep -o "rank 1 of 2 failed: [^;]*" "$d/log" | head -1
  [[ $rc == 2 ]] || { cat "$d/log"; exit 1; }
  ;;
config)
  "${mpi[@]}" -np 1 "$recur" train "$cfg" "${sets[@]}" : \
    -np 1 "$recur" train "$cfg" "${sets[@]}" --set algo.epochs=3 >"$d/log" 2>&1
  rc=$?
  echo "status $rc"
  grep -o "rank 1's config differs from rank 0's at [^ ]*" "$d/log" | head -1
  [[ $rc == 2 ]] || { cat "$d/log"; exit 1; }
  ;;
world)
  "${mpi[@]}" -np 2 "$recur" --log-level warn train "$cfg" "${sets[@]}" \
    --set run.total_env_steps=2048 || exit 1
  run=$(ls -d "$d"/runs/*)
  "${mpi[@]}" -np 1 "$recur" train --resume "$run" --set run.total_env_steps=4096 >"$d/log" 2>&1
  rc=$?
  echo "status $rc"
  grep -o "trained by 2 rank(s) and this job has 1: [^)]*)" "$d/log" | head -1
  [[ $rc == 2 ]] || { cat "$d/log"; exit 1; }
  ;;
*)
  echo "unknown mode $mode"; exit 2 ;;
esac
