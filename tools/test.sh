#!/usr/bin/env bash
# README command 2: installs what is missing, builds, and runs the whole test suite: ctest (the
# C++ doctest suite and the CLI tests), then the Python package's pytest suite
# (tools/test-python.sh: a CPU-only extension build in build-py/, PyPI packages in a venv under
# /tmp). GPU tests skip themselves (with a message) on machines without a GPU. Between the two,
# a short run of every libFuzzer harness (tools/fuzz/run.sh: 10 s each over its committed corpus,
# built with clang into build-fuzz/; skipped with a message where clang's libFuzzer is absent).
#   RECUR_SKIP_PYTHON=1   no Python suite (e.g. offline, without PyPI)
#   RECUR_SKIP_FUZZ=1     no fuzzer run
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
tools/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)"
if [[ ${RECUR_SKIP_FUZZ:-} != 1 ]]; then
  tools/fuzz/run.sh --skip-missing
fi
if [[ ${RECUR_SKIP_PYTHON:-} != 1 ]]; then
  bash tools/test-python.sh
fi
