# Sourced by tools/gpu/run.sh and tools/gpu/speed.sh on the device machine: the repository root,
# the bundle runner, the output folder and the time budget of one `run` call.
#   root    the repository root (the current directory afterwards)
#   budget  seconds for the whole script: its first argument, default 540 (the run tool allows 600)
#   out     where logs go: $OUT (what the run tool brings back), else ./gpu-out
#   R       runs a bundled binary: "$R bin/recur ..." (.devbundle/run.sh sets the libraries up)
#   left    seconds of the budget left; section NAME SECONDS_NEEDED: true when there is time for
#           the section, else it logs the skip to $out/skipped.txt and is false
# shellcheck shell=bash
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
root=$PWD
budget=${1:-540}
out=${OUT:-$root/gpu-out}
mkdir -p "$out"
bundle=$root/.devbundle
R="bash $bundle/run.sh"
export RECUR_TEST_DATA_DIR=$root/tests/data
start=$SECONDS

left() { echo $((budget - (SECONDS - start))); }
section() {
  if (($(left) < $2)); then
    echo "SKIPPED $1: $(left) s of the budget left, it needs ~$2 s" | tee -a "$out/skipped.txt"
    return 1
  fi
  echo "== $1 ($(left) s left)"
}

# The run tool brings back at most 8 files from $OUT (tools/gpu/README.md):
# pack_out KEEP... puts every file under $out into $out/logs.tar.gz and leaves beside it only the
# summaries named (at most 7), so that no log is silently left on the device.
pack_out() {
  local tarball name
  tarball=$(mktemp --suffix=.tar.gz)
  tar -czf "$tarball" -C "$out" --exclude=./logs.tar.gz . && mv "$tarball" "$out/logs.tar.gz"
  for f in "$out"/* "$out"/.[!.]*; do
    [[ -e $f ]] || continue
    name=$(basename "$f")
    [[ $name == logs.tar.gz || " $* " == *" $name "* ]] || rm -rf "$f"
  done
}

# run_cases FILE FAILLOG TIMEOUT: runs each test case named on stdin (one per line; doctest's
# listing frame is skipped) in its own process, so that a crash in one hides none of the others:
# one line per case into FILE (PASS/FAIL/SKIP, exit code, seconds, name), the output of every
# case that did not pass into FAILLOG, and a last line "P passed, F failed, S skipped". Cases that
# would start with under 20 s of the budget left are listed as skipped for the budget.
run_cases() {
  local file=$1 faillog=$2 limit=$3 name log rc verdict t0
  : >"$file"
  while IFS= read -r name; do
    [[ -z $name || $name == \[doctest\]* || $name == =* ]] && continue
    (($(left) < 20)) && { echo "SKIPPED (budget) :: $name" >>"$file"; continue; }
    t0=$SECONDS
    log=$(mktemp)
    # shellcheck disable=SC2086  # $R is a command and its first argument
    timeout "$limit" $R bin/recur_tests -tc="$name" >"$log" 2>&1
    rc=$?
    verdict=FAIL
    ((rc == 0)) && verdict=PASS
    # tests/support/gpu_skip.h prints why a case skipped: no usable GPU here
    ((rc == 0)) && grep -q '^\[skip\]' "$log" && verdict=SKIP
    printf '%s rc=%d %3ds :: %s\n' "$verdict" "$rc" $((SECONDS - t0)) "$name" | tee -a "$file"
    [[ $verdict == FAIL ]] && { echo "===== $name (rc=$rc)"; cat "$log"; } >>"$faillog"
    rm -f "$log"
  done
  echo "$(grep -c '^PASS' "$file") passed, $(grep -c '^FAIL' "$file") failed, $(grep -c '^SKIP' "$file") skipped" |
    tee -a "$file"
}
