#!/usr/bin/env bash
# Prepares the GPU verification of recur for a lent device machine (tools/gpu/README.md):
# builds the tests and the `recur` binary for Hopper in build-device/ (portable x86-64-v3 host
# code, no -march=native: the device's CPU is not this one; -DRECUR_RECORDING=OFF: Debian's FFmpeg
# with its codec libraries is ~180 MiB, the device carry 64 MiB, and recording needs no GPU;
# -DRECUR_MPI=OFF: without MPI there is no NCCL either, whose library alone is ~210 MiB, and
# one lent GPU runs no multi-rank job),
# bundles them with their libraries
# into .devbundle/ (ignored by .gitignore) and prints the device command: tools/gpu/run.sh, which
# runs every GPU test case in its own process, compute-sanitizer, the benchmarks and end-to-end
# training runs inside the run tool's 10 minutes.
#
#   bash tools/gpu/bundle.sh            # build + bundle here, then print the command for `run`
#
# On the device (the `run` tool, carry [".devbundle"]) run the printed commands; tools/gpu/run.sh
# and tools/gpu/speed.sh say what they write under $OUT (gpu-cases.txt is the per-case PASS/FAIL
# table). Record the
# figures in docs/PERFORMANCE.md with the device, driver and cuDNN version info.txt prints.
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DRECUR_CUDA=ON -DRECUR_RECORDING=OFF -DRECUR_MPI=OFF \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DRECUR_NATIVE=OFF -DCMAKE_CXX_FLAGS=-march=x86-64-v3
cmake --build build-device -j"$(nproc)" --target recur_tests recur
bundler=../shared/tools/device-bundle.sh  # the workplace's, outside this repository (README.md)
[[ -f $bundler ]] || { echo "tools/gpu/bundle.sh: $bundler not found: the build is in build-device/; bundle it by hand or run it where a GPU is" >&2; exit 2; }
bash "$bundler" .devbundle build-device/tests/recur_tests build-device/tools/recur
du -sh .devbundle
cat <<'CMD'
device commands (run tool, carry [".devbundle"], timeout_s 600; logs come back under $OUT), one
call each, in this order. A session's device time is 15 minutes with the machine's start, so the
first call is usually the only one: it takes what the open issues wait for first.
bash tools/gpu/first_call.sh 540   # new GPU cases, cores' and learner's benches, time to 200
  (2026-11-30 it took 341 s of 530: with `bash tools/gpu/peers_wheels.sh` run here first and
  carry [".devbundle", ".whl"], a second call at once, while the machine is warm, fits the peers:
  mkdir -p $OUT/sf $OUT/cl; OUT=$OUT/sf bash tools/gpu/peers.sh 235 sf; OUT=$OUT/cl bash tools/gpu/peers.sh 190 cleanrl
  then give_back)
bash tools/gpu/run.sh 540          # correctness: every GPU test case, sanitizer, all device pairs
bash tools/gpu/speed.sh 540        # speed: recur vs PyTorch side by side, profile, scale
(peers: bash tools/gpu/peers_wheels.sh here first, then carry [".whl", ".devbundle"])
CMD
