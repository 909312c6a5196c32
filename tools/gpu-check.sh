#!/usr/bin/env bash
# Prepares the GPU verification of recur for a lent device machine (../shared/docs/GPU.md):
# builds the tests and the `recur` binary for Hopper in build-device/ (portable x86-64-v3 host
# code, no -march=native: the device's CPU is not this one), bundles them with their libraries
# into .devbundle/ (ignored by .gitignore) and prints the device command that runs every GPU test and benchmark.
#
#   bash tools/gpu-check.sh            # build + bundle here, then print the command for `run`
#
# On the device (the `run` tool, carry [".devbundle"]) run the printed command; it writes
# $OUT/gpu-tests.log, $OUT/compute-sanitizer.log and $OUT/bench-*.txt. Record the figures in
# docs/PERFORMANCE.md with the device, driver and cuDNN version the logs print.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DRECUR_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DRECUR_NATIVE=OFF -DCMAKE_CXX_FLAGS=-march=x86-64-v3
cmake --build build-device -j"$(nproc)" --target recur_tests recur
../shared/tools/device-bundle.sh .devbundle build-device/tests/recur_tests build-device/tools/recur
du -sh .devbundle
cat <<'CMD'
device command (run tool, carry [".devbundle"]):
nvidia-smi -L; b=.devbundle/run.sh; bash $b bin/recur info | tee $OUT/info.txt; RECUR_TEST_DATA_DIR=$PWD/tests/data bash $b bin/recur_tests 2>&1 | tee $OUT/gpu-tests.log | tail -30; (command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer) >/dev/null 2>&1 && bash $b $(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer) bin/recur_tests -tc='*cuda*,*cudnn*,*kernel*,*train_mlp*' -tce='*learns*,*trained on the GPU*' > $OUT/compute-sanitizer.log 2>&1; bash $b bin/recur bench rnn-gpu --min-seconds 0.1 > $OUT/bench-rnn-gpu-lstm.txt 2>&1; bash $b bin/recur bench devices --hidden 64,256 > $OUT/bench-devices.txt 2>&1; tail -5 $OUT/bench-rnn-gpu-lstm.txt $OUT/bench-devices.txt
CMD
