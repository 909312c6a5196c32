#!/usr/bin/env bash
# The GPU verification of recur, run ON the device machine from the repository root, after
# `bash tools/gpu/bundle.sh` built and bundled it here (tools/gpu/README.md):
#
#   bash tools/gpu/run.sh [BUDGET_SECONDS]        # default 540: the run tool allows 600 a call
#
# Writes into $OUT (or ./gpu-out), all of it packed into logs.tar.gz at the end (the run tool
# returns 8 files at most) with info.txt, gpu-cases.txt, gpu-failures.log, compute-sanitizer.txt,
# train-summary.txt and skipped.txt left beside it:
#   info.txt             nvidia-smi and `recur info` (device, driver, CUDA, cuDNN)
#   gpu-cases.txt        one line per GPU test case, each run in its own process (a crash in one
#                        hides none of the others): PASS/FAIL/SKIP, exit code, seconds, name; then
#                        "GPU cases: P / N passed"
#   gpu-failures.log     the full output of every case that did not pass
#   compute-sanitizer.txt  memcheck over the GPU kernels' and executors' cases
#   bench-rnn-gpu.txt, bench-rnn-gpu-{lstm_ln,mingru}.txt, bench-devices.txt, bench-train-async.txt (sync vs async, cuda/cuda)
#   train-*.txt          end-to-end runs: the main job on all four device combinations, and the
#                        larger policy (hidden 256, 64 envs, 200k steps) as cpu/cpu, cpu/cuda and
#                        cuda/cuda
# Sections run in order of importance; one that would start past the budget is skipped and says
# so, so the whole command stays inside the run tool's 10 minutes.
set -uo pipefail
# shellcheck source=tools/gpu/common.sh
source "$(dirname "$0")/common.sh"

section info 5 && {
  nvidia-smi -L
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  $R bin/recur info
} >"$out/info.txt" 2>&1

# Every test case whose name says it touches the GPU, one process each.
if section "GPU test cases" 120; then
  : >"$out/gpu-cases.txt"
  : >"$out/gpu-failures.log"
  pass=0
  skip=0
  total=0
  while IFS= read -r name; do
    [[ -z $name ]] && continue
    total=$((total + 1))
    t0=$SECONDS
    log=$(mktemp)
    timeout 300 $R bin/recur_tests -tc="$name" >"$log" 2>&1
    rc=$?
    verdict=FAIL
    if ((rc == 0)) && grep -q '^\[skip\]' "$log"; then
      verdict=SKIP # tests/support/gpu_skip.h printed why: no usable GPU here
      skip=$((skip + 1))
    elif ((rc == 0)); then
      verdict=PASS
      pass=$((pass + 1))
    fi
    printf '%s rc=%d %3ds :: %s\n' "$verdict" "$rc" $((SECONDS - t0)) "$name" | tee -a "$out/gpu-cases.txt"
    if [[ $verdict == FAIL ]]; then
      { echo "===== $name (rc=$rc)"; cat "$log"; } >>"$out/gpu-failures.log"
    fi
    rm -f "$log"
  done < <($R bin/recur_tests --list-test-cases --no-intro=true 2>/dev/null |
    grep -iE 'cuda|cudnn|gpu|kernel|train_mlp|device' | grep -v '^\[doctest\]')
  echo "GPU cases: $pass / $total passed, $skip skipped" | tee -a "$out/gpu-cases.txt"
fi

# The kernels and executors under memcheck (not the training runs: too slow under the tool).
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [[ -x $sanitizer ]] && section compute-sanitizer 90; then
  timeout 240 $R "$sanitizer" --error-exitcode 9 bin/recur_tests \
    -tc='*cuda*,*cudnn*,*kernel*,*train_mlp*' -tce='*learns*,*trained on the GPU*' \
    >"$out/compute-sanitizer.txt" 2>&1
  echo "compute-sanitizer rc=$?" | tee -a "$out/compute-sanitizer.txt"
fi

section "bench rnn-gpu" 60 &&
  timeout 120 $R bin/recur bench rnn-gpu --batch 1,16,64,256,1024 --hidden 64,128,256 \
    --seq-len 32 --min-seconds 0.05 >"$out/bench-rnn-gpu.txt" 2>&1
# recur's fused sequence kernels (issue 37) beside cuDNN's plain LSTM of the same H.
for cell in lstm_ln mingru mingru_highway; do
  section "bench rnn-gpu $cell" 40 &&
    timeout 90 $R bin/recur bench rnn-gpu --cell "$cell" --batch 16,256,1024 --hidden 128,256 \
      --seq-len 32 --min-seconds 0.05 >"$out/bench-rnn-gpu-$cell.txt" 2>&1
done
section "bench devices" 60 &&
  timeout 120 $R bin/recur bench devices --hidden 64,256 --envs 1,16,64,256,1024 \
    --learner-envs 16,64,256 --min-seconds 0.05 >"$out/bench-devices.txt" 2>&1

# train NAME LIMIT_S ARGS...: one end-to-end run, its last lines and its wall time.
train() {
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  timeout "$limit" $R bin/recur --log-level warn train "$root/configs/cartpole_novel.yaml" \
    --set run.output_dir="$out/runs/$name" --set run.eval_every=0 "$@" >"$out/train-$name.txt" 2>&1
  local rc=$?
  echo "$name rc=$rc wall $((SECONDS - t0)) s $( ((rc == 124)) && echo "(stopped at the ${limit} s limit)")" |
    tee -a "$out/train-summary.txt"
  tail -2 "$out/train-$name.txt" | tee -a "$out/train-summary.txt"
}
for combo in cuda/cuda cpu/cuda cuda/cpu cpu/cpu; do
  section "train main job $combo" 35 &&
    train "main-${combo/\//-}" 90 --set device.actor="${combo%/*}" --set device.learner="${combo#*/}"
done
large=(--set policy.hidden=256 --set env.num_envs=64 --set run.total_env_steps=200000)
for combo in cuda/cuda cpu/cuda cpu/cpu; do
  section "train large $combo" 30 &&
    train "large-${combo/\//-}" "$(( $(left) < 150 ? $(left) : 150 ))" "${large[@]}" \
      --set device.actor="${combo%/*}" --set device.learner="${combo#*/}"
done
# The async actor-learner (algo.async, with its anchor pass): the main job on the GPU combos, and
# sync vs async throughput at 1024 envs / LSTM 256 (issue 14's >= 300k env steps/s goal).
for combo in cuda/cuda cpu/cuda; do
  section "train async $combo" 30 &&
    train "async-${combo/\//-}" 90 --set algo.async=true --set device.actor="${combo%/*}" \
      --set device.learner="${combo#*/}"
done
section "bench train async" 60 &&
  timeout 150 $R bin/recur bench train "$root/configs/cartpole_novel.yaml" --updates 10 \
    --set env.num_envs=1024 --set policy.hidden=256 --set algo.num_minibatches=4 \
    --set algo.epochs=4 --set device.actor=cuda --set device.learner=cuda \
    >"$out/bench-train-async.txt" 2>&1
rm -rf "$out/runs"
pack_out info.txt gpu-cases.txt gpu-failures.log compute-sanitizer.txt train-summary.txt skipped.txt
echo "gpu-run: done in $((SECONDS - start)) s; logs in $out (all of them in logs.tar.gz)"
