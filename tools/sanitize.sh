#!/usr/bin/env bash
# Every ctest case under AddressSanitizer and UndefinedBehaviorSanitizer: a CPU-only build
# (RelWithDebInfo, RECUR_SANITIZE=address,undefined, -fno-sanitize-recover so that UB stops the
# test) in build-asan/, then ctest. LeakSanitizer is on, with the leaks of system libraries
# suppressed (tools/lsan.supp); the MPI cases (dist.*) run without it, because Open MPI's plugins
# leak from modules it unloads at exit, which a suppression cannot name. Not part of CI: the build
# takes ~50 min on 2 cores, the run ~10. Extra arguments go to both ctest calls (e.g. --timeout
# 1800; not -R or -E, which the two calls set).
#   bash tools/sanitize.sh [CTEST_ARGS...]        RECUR_SANITIZE_DIR=DIR to build elsewhere
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${RECUR_SANITIZE_DIR:-build-asan}
generator=()
[[ -f $dir/CMakeCache.txt ]] || { command -v ninja >/dev/null && generator=(-G Ninja); }
cmake -S . -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRECUR_CUDA=OFF \
  -DRECUR_SANITIZE=address,undefined
cmake --build "$dir" -j"$(nproc)"
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
LSAN_OPTIONS=suppressions=$PWD/tools/lsan.supp:print_suppressions=0 \
  ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 \
  ctest --test-dir "$dir" -j"$(nproc)" --output-on-failure -E '^dist\.' "$@" || status=1
ASAN_OPTIONS=detect_leaks=0:halt_on_error=1 \
  ctest --test-dir "$dir" -j"$(nproc)" --output-on-failure -R '^dist\.' "$@" || status=1
exit $status
