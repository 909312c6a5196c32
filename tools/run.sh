#!/usr/bin/env bash
# README command 1: installs what is missing, builds, and runs the main job.
# Until training lands the main job is a random policy on CartPole-v1 printing episode returns.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
tools/build.sh
exec build/tools/recur demo --env CartPole-v1 --num-envs 4 --episodes 10 --seed 0 "$@"
