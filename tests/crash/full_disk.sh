#!/usr/bin/env bash
# recur train and recur record on a full file system (docs/ARCHITECTURE.md "Crash safety"): a
# small tmpfs mounted here, filled with a filler file but for a few KiB. Each command must exit
# with status 2 and an error naming the file and "No space left on device"; nothing earlier is
# damaged (the previous checkpoint loads, the trainer state names it, the logs hold complete rows);
# no half file appears under a final name and no temp file is left; and once the filler is gone
# the same command (train: --resume) succeeds.
#
# usage: full_disk.sh RECUR CRASH_CHECK CONFIG_DIR
# Mounting needs root (CI) or a user namespace (unshare -rm); where neither is allowed the test
# says so and exits 77 (ctest: skipped).
set -u
recur=$1 check=$2 configs=$3
d=$(mktemp -d)
mnt=$d/mnt
mkdir -p "$mnt"
trap 'umount "$mnt" 2>/dev/null; rm -rf "$d"' EXIT

if ! mount -t tmpfs -o size=8m tmpfs "$mnt" 2>"$d/mount.err"; then
  if [[ -z ${RECUR_FULL_DISK_USERNS:-} ]] && unshare --user --map-root-user --mount true 2>/dev/null; then
    rm -rf "$d"
    trap - EXIT
    RECUR_FULL_DISK_USERNS=1 exec unshare --user --map-root-user --mount bash "$0" "$@"
  fi
  echo "SKIP: cannot mount a tmpfs ($(cat "$d/mount.err")) nor in a user namespace (unshare -rm)"
  exit 77
fi
echo "tmpfs of 8 MiB at $mnt"

fail() {
  echo "FAIL: $*"
  [[ -s $d/log ]] && { echo "--- log"; cat "$d/log"; }
  exit 1
}
# Fills the tmpfs but for $1 bytes.
fill_leaving() {
  rm -f "$mnt/filler"
  dd if=/dev/zero of="$mnt/filler" bs=64k 2>/dev/null
  truncate -s "-$1" "$mnt/filler"
}
# The command in "$@" must fail with status 2 and name a file under the tmpfs and ENOSPC.
expect_enospc() {
  "$@" >"$d/log" 2>&1
  local rc=$?
  [[ $rc -eq 2 ]] || fail "status $rc, 2 expected: $*"
  grep "^error: " "$d/log" | grep -q "$mnt/[^ ]*.*No space left on device" ||
    fail "the error does not name a file under $mnt and 'No space left on device'"
  grep "^error: " "$d/log" | sed "s|$d|\$TMP|g"
}
no_temps() {
  local left
  left=$(find "$mnt" -name '.*.tmp.*' -o -name '.*.old.*')
  [[ -z $left ]] || fail "temp files left behind: $left"
}

# ---- train: the disk fills while a resumed run writes its checkpoint ----------------------------
sets=(--set env.num_envs=4 --set algo.rollout_steps=16 --set algo.epochs=2 --set run.eval_every=256
  --set run.eval_episodes=1 --set run.final_eval_episodes=1 --set run.tensorboard=true)
"$recur" --log-level warn train "$configs/cartpole.yaml" "${sets[@]}" --set run.total_env_steps=512 \
  --set run.output_dir="$mnt/runs" >"$d/log" 2>&1 || fail "train with space failed"
run=$(ls -d "$mnt"/runs/cartpole-*)
cp "$run/checkpoints/latest.safetensors" "$d/latest_before"
# Room for the log rows and a new event file, not for a checkpoint or the trainer state.
fill_leaving $((24 * 1024))
echo "train --resume on a full disk:"
expect_enospc "$recur" --log-level warn train --resume "$run" --set run.total_env_steps=1024
no_temps
cmp -s "$run/checkpoints/latest.safetensors" "$d/latest_before" ||
  fail "the latest checkpoint changed although its write failed"
"$check" run "$run" >"$d/log" 2>&1 || fail "crash_check run after ENOSPC"
"$recur" eval "$run/checkpoints/latest.safetensors" --episodes 1 >"$d/log" 2>&1 ||
  fail "the previous checkpoint does not evaluate"
rm -f "$mnt/filler"
"$recur" --log-level warn train --resume "$run" --set run.total_env_steps=1024 >"$d/log" 2>&1 ||
  fail "train --resume with space again failed"
"$check" run "$run" --finished --stride 64 >"$d/log" 2>&1 || fail "crash_check run --finished"
echo "train: resumed with space: $(grep -c . "$run/progress.csv") progress lines"

# ---- record: videos and a dataset on a full disk ------------------------------------------------
rec=(record --random --env CartPole-v1 --seed 3 --dataset-id recur/full/random-v0 --out "$mnt/ds")
fill_leaving $((48 * 1024))
echo "record --video on a full disk:"
expect_enospc "$recur" "${rec[@]}" --episodes 60 --video "$mnt/videos" --video-every 1
[[ ! -e $mnt/videos && ! -e $mnt/ds/recur/full ]] || fail "record left files: $(find "$mnt/videos" "$mnt/ds" 2>&1)"
no_temps
fill_leaving $((16 * 1024))
echo "record (HDF5 only) on a full disk:"
expect_enospc "$recur" "${rec[@]}" --episodes 400 --format both
[[ ! -e $mnt/ds/recur/full ]] || fail "record left a dataset: $(find "$mnt/ds")"
no_temps
rm -f "$mnt/filler"
"$recur" "${rec[@]}" --episodes 60 --video "$mnt/videos" --video-every 1 --format both >"$d/log" 2>&1 ||
  fail "record with space again failed"
"$check" videos "$mnt/videos" --no-temps >"$d/log" 2>&1 || fail "crash_check videos"
"$check" dataset "$mnt/ds" recur/full/random-v0 --no-temps >"$d/log" 2>&1 || fail "crash_check dataset"
echo "record: with space: $(ls "$mnt/videos" | wc -l) videos, $(sed -n 's/^dataset .*: //p' "$d/log")"
echo "full disk: passed"
