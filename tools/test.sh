#!/usr/bin/env bash
# README command 2: installs what is missing, builds, and runs the whole test suite: ctest (the
# C++ doctest suite and the CLI tests), then the Python package's pytest suite
# (tools/test-python.sh: a CPU-only extension build in build-py/, PyPI packages in a venv under
# /tmp). GPU tests skip themselves (with a message) on machines without a GPU.
#   RECUR_SKIP_PYTHON=1   ctest only (e.g. offline, without PyPI)
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
tools/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)"
if [[ ${RECUR_SKIP_PYTHON:-} != 1 ]]; then
  bash tools/test-python.sh
fi
