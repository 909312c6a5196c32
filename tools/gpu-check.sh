#!/usr/bin/env bash
# The entry point the developers' guide names for a session with a lent GPU: builds recur and its
# tests for Hopper and bundles them into .devbundle/ (tools/gpu/bundle.sh), then prints the device
# calls in the order to make them. The scripts themselves live in tools/gpu/ (README.md there).
#
#   bash tools/gpu-check.sh      # here; then `run` the first printed command, carry [".devbundle"]
set -euo pipefail
exec bash "$(dirname "$0")/gpu/bundle.sh" "$@"
