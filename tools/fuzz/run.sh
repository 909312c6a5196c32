#!/usr/bin/env bash
# Builds the libFuzzer harnesses (tools/fuzz/CMakeLists.txt) with clang into build-fuzz/ and runs
# each over its committed corpus (tools/fuzz/corpus/<harness>/); fails on any crash, sanitizer
# report, hang (-timeout) or memory blow-up (-rss_limit_mb). docs/FUZZING.md describes each one.
#
#   tools/fuzz/run.sh                  every harness for RECUR_FUZZ_SECONDS (default 10) seconds
#   tools/fuzz/run.sh --runs 1000000   every harness for that many executions (the figures in
#                                      docs/FUZZING.md)
#   tools/fuzz/run.sh --merge          after a run: minimise what it found into the committed corpus
#   tools/fuzz/run.sh --skip-missing   exit 0 with a message when clang or libFuzzer is absent
#                                      (tools/test.sh uses this)
#   tools/fuzz/run.sh ... NAME...      only those harnesses (config, checkpoint, trainer_state,
#                                      csv_resume, tensorboard, minari_metadata)
#
# New inputs go to build-fuzz/work/<harness>/, logs to build-fuzz/logs/<harness>.log, and a
# failing input to build-fuzz/artifacts/ (reproduce: build-fuzz/<harness>_fuzzer FILE).
set -euo pipefail
cd "$(dirname "$0")/../.."

all=(config checkpoint trainer_state csv_resume tensorboard minari_metadata)
runs="" merge=0 skip_missing=0 names=()
while (($#)); do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --merge) merge=1; shift ;;
    --skip-missing) skip_missing=1; shift ;;
    -h | --help) sed -n '2,16p' "$0"; exit 0 ;;
    *) names+=("$1"); shift ;;
  esac
done
((${#names[@]})) || names=("${all[@]}")

# libFuzzer comes with clang's runtime libraries (Debian: clang and libclang-rt-14-dev).
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' \
  >"$probe/probe.cc"
if ! command -v clang++ >/dev/null ||
  ! clang++ -fsanitize=fuzzer,address,undefined "$probe/probe.cc" -o "$probe/probe" 2>/dev/null; then
  msg="fuzz: clang++ with libFuzzer not found (tools/install-deps.sh installs clang and libclang-rt-14-dev)"
  if ((skip_missing)); then
    echo "$msg; skipping the fuzzers"
    exit 0
  fi
  echo "$msg" >&2
  exit 1
fi

build=build-fuzz
generator=()
# CMAKE_GENERATOR when set (CI sets Unix Makefiles), else Ninja when present.
[[ -z ${CMAKE_GENERATOR:-} ]] && command -v ninja >/dev/null && generator=(-G Ninja)
if [[ ! -f $build/CMakeCache.txt ]]; then
  CC=clang CXX=clang++ cmake -S tools/fuzz -B "$build" "${generator[@]}" >/dev/null
fi
cmake --build "$build" -j"$(nproc)"

mkdir -p "$build/logs" "$build/artifacts"
limits=(-rss_limit_mb=2048 -timeout=10 -print_final_stats=1 -artifact_prefix="$build/artifacts/")
if [[ -n $runs ]]; then
  limits+=(-runs="$runs")
else
  limits+=(-max_total_time="${RECUR_FUZZ_SECONDS:-10}")
fi

failed=()
for name in "${names[@]}"; do
  corpus=tools/fuzz/corpus/$name work=$build/work/$name log=$build/logs/$name.log
  [[ -d $corpus ]] || { echo "fuzz: no harness '$name' (have: ${all[*]})" >&2; exit 2; }
  mkdir -p "$work"
  start=$SECONDS
  if "$build/${name}_fuzzer" "${limits[@]}" "$work" "$corpus" >"$log" 2>&1; then status=ok; else
    status=FAILED
    failed+=("$name")
  fi
  # libFuzzer's last status line ("#N DONE cov: C ft: F corp: ...") and its final statistics.
  done_line=$(grep -a -E '^#[0-9]+' "$log" | tail -1 || true)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$done_line")
  ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$done_line")
  printf 'fuzz: %-16s %-6s %9s execs %6s exec/s  cov %5s  ft %6s  %4ds  corpus %s files\n' \
    "$name" "$status" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" $((SECONDS - start)) \
    "$(find "$corpus" -type f | wc -l)"
  if [[ $status == FAILED ]]; then
    grep -a -E 'ERROR|runtime error|SUMMARY|what\(\)|Test unit written' "$log" | head -20 >&2 || true
    echo "fuzz: full log in $log" >&2
  elif ((merge)); then
    "$build/${name}_fuzzer" -merge=1 "$corpus" "$work" >>"$log" 2>&1
  fi
done

if ((${#failed[@]})); then
  echo "fuzz: FAILED: ${failed[*]}" >&2
  exit 1
fi
