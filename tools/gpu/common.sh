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
