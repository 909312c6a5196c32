#!/usr/bin/env bash
# README command 2: installs what is missing, builds, and runs the whole test suite with ctest.
# GPU tests skip themselves (with a message) on machines without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
tools/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)"
