#!/usr/bin/env bash
# The GPU SPEED measurements of issue 15, run ON the device machine from the repository root after
# `bash tools/gpu/bundle.sh` built and bundled recur (tools/gpu/README.md). tools/gpu/run.sh is
# the correctness pass (every GPU test case, sanitizer, the main job on all device pairs); this
# one measures, with PyTorch side by side in the same call wherever there is a peer:
#
#   bash tools/gpu/speed.sh [BUDGET_SECONDS]     # default 540: the run tool allows 600 a call
#
# Writes into $OUT (or ./gpu-out), all of it packed into logs.tar.gz at the end (the run tool
# returns 8 files at most) with info.txt, the two bench tables, torch-peer.txt, train-gpu.txt and
# skipped.txt left beside it:
#   info.txt              nvidia-smi, `recur info`, the PyTorch version (device, driver, cuDNN)
#   step-cases.txt        the CUDA step executor and policy actor test cases (copy and zero-copy
#                         I/O, graph == plain, GPU == CPU), one process each, PASS/FAIL
#   sanitizer-*.txt       memcheck, racecheck and synccheck over the zero-copy cases (the new
#                         fetch/emit kernels and the prepare kernel)
#   bench-rnn-gpu.txt     recur's step rows (cuda-step, -graph, -mapped) and cuDNN rows
#                         (host-span and device-resident, standard and persist_small_h)
#   torch-peer.txt        tools/bench/bench_torch_peer.py at the same shapes (step, sequence, floors,
#                         the bench-devices actor) when python3 can import torch
#   bench-devices.txt     the whole-policy actor (cpu, cuda, cuda-mapped) and PPO minibatch, and
#                         where each GPU row's time goes (--stages: device us per stage, CUDA
#                         events at the boundaries the actor and the engine mark)
#   nsys-*.txt            per-kernel and per-API time of one actor act() loop and one PPO
#                         minibatch loop, when nsys is installed (the profile issue 15 asks for)
#   bench-train-gpu.txt   configs/lunar_lander_gpu.yaml: cuda/cuda (copy and mapped actor I/O)
#                         vs cpu/cpu env steps/s in one process each
#   train-gpu.txt         the same config trained on cuda/cuda until its first evaluation >= 200
#                         (run.stop_at_target) or the budget ends: the time to target is its
#                         last line (eval.csv, progress.csv kept)
# Sections run in order of importance; one that would start past the budget is skipped and says
# so, so the whole command stays inside the run tool's 10 minutes.
set -uo pipefail
# shellcheck source=tools/gpu/common.sh
source "$(dirname "$0")/common.sh"
has_torch() { python3 -c "import torch; assert torch.cuda.is_available()" >/dev/null 2>&1; }

section info 10 && {
  nvidia-smi -L
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  $R bin/recur info
  python3 -c "import torch; print('torch', torch.__version__, 'cudnn', torch.backends.cudnn.version())" 2>&1
  command -v nsys || ls /usr/local/cuda/bin/nsys 2>&1
} >"$out/info.txt" 2>&1

section "step test cases" 60 &&
  $R bin/recur_tests --list-test-cases --no-intro=true 2>/dev/null |
  grep -iE 'cuda step executor|cuda policy actor|zero-copy|GPU actor' |
    run_cases "$out/step-cases.txt" "$out/step-failures.log" 120

sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck synccheck; do
  [[ -x $sanitizer ]] && section "compute-sanitizer $tool" 40 && {
    timeout 120 $R "$sanitizer" --tool "$tool" --error-exitcode 9 bin/recur_tests \
      -tc='*zero-copy*,*cuda step executor equals the cpu step executor'
    echo "compute-sanitizer $tool rc=$?"
  } >"$out/sanitizer-$tool.txt" 2>&1
done

shapes=(--batch 1,16,64,256,1024 --hidden 64,128,256 --seq-len 32 --min-seconds 0.05)
section "bench rnn-gpu" 90 &&
  timeout 180 $R bin/recur bench rnn-gpu "${shapes[@]}" --no-cpu >"$out/bench-rnn-gpu.txt" 2>&1
has_torch && section "torch peer" 90 &&
  timeout 180 python3 tools/bench/bench_torch_peer.py "${shapes[@]}" >"$out/torch-peer.txt" 2>&1
section "bench devices" 60 &&
  timeout 150 $R bin/recur bench devices --hidden 64,256 --envs 1,16,64,256,1024 \
    --learner-envs 16,64,256 --min-seconds 0.05 --stages >"$out/bench-devices.txt" 2>&1

# The profile: every kernel and CUDA API call of the actor step and the PPO minibatch at the
# issue's shapes (launch-bound or compute-bound, and which kernels). nsys ships with the toolkit
# in several places; --stages above is the fallback when none is installed.
nsys=$(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys \
  /usr/local/cuda*/nsight-systems*/bin/nsys 2>/dev/null | head -1)
nsys=${nsys:-/usr/local/cuda/bin/nsys}
if [[ -x $nsys ]]; then
  for what in "actor:--envs 16,1024 --learner-envs 1" "learner:--envs 1 --learner-envs 16,256"; do
    name=${what%%:*}
    section "nsys $name" 45 || continue
    # shellcheck disable=SC2086
    timeout 120 $R "$nsys" profile --force-overwrite true -o "$out/nsys-$name" --stats=false \
      bin/recur bench devices --hidden 256 ${what#*:} --min-seconds 0.2 >/dev/null 2>&1
    timeout 60 "$nsys" stats --report cuda_gpu_kern_sum,cuda_api_sum,cuda_gpu_mem_time_sum \
      "$out/nsys-$name.nsys-rep" >"$out/nsys-$name.txt" 2>&1
    rm -f "$out/nsys-$name.nsys-rep" "$out/nsys-$name.sqlite"
  done
else
  echo "no nsys on this machine: no kernel profile" | tee -a "$out/skipped.txt"
fi

# End to end at scale (configs/lunar_lander_gpu.yaml): env steps/s per device pair, then the time
# to the target score on cuda/cuda for whatever budget is left.
cfg=$root/configs/lunar_lander_gpu.yaml
section "bench train gpu config" 90 && {
  timeout 100 $R bin/recur --log-level warn bench train "$cfg" --updates 20 --modes sync,async \
    --devices cuda/cuda
  timeout 60 $R bin/recur --log-level warn bench train "$cfg" --updates 20 --modes sync \
    --devices cuda/cuda --set device.actor_io=mapped
  timeout 90 $R bin/recur --log-level warn bench train "$cfg" --updates 3 --modes sync \
    --devices cpu/cpu,cpu/cuda
} >"$out/bench-train-gpu.txt" 2>&1
if section "train gpu config to target" 60; then
  # run.stop_at_target: it ends at the first evaluation >= 200 and prints the time to target.
  timeout $(($(left) - 15)) $R bin/recur --log-level info train "$cfg" --set device.actor=cuda \
    --set device.learner=cuda --set run.output_dir="$out/runs" --set run.tensorboard=false \
    --set run.stop_at_target=true >"$out/train-gpu.txt" 2>&1
  echo "train rc=$? after $((SECONDS - start)) s of the script" >>"$out/train-gpu.txt"
  for d in "$out"/runs/*/; do
    cp "$d/eval.csv" "$out/train-gpu-eval.csv" 2>/dev/null
    cp "$d/progress.csv" "$out/train-gpu-progress.csv" 2>/dev/null
  done
  rm -rf "$out/runs"
fi
pack_out info.txt bench-rnn-gpu.txt torch-peer.txt bench-devices.txt train-gpu.txt skipped.txt
echo "gpu-speed: done in $((SECONDS - start)) s; logs in $out (all of them in logs.tar.gz)"
