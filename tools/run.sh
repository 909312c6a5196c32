#!/usr/bin/env bash
# README command 1: installs what is missing, builds, and runs the main job: training a recurrent
# (LSTM) policy on CartPoleNoVel-v1 (velocities hidden) from configs/cartpole_novel.yaml, ending
# with a deterministic evaluation over 100 episodes. Extra arguments go to `recur train`
# (e.g. --set run.seed=3).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
RECUR_BUILD_TARGETS=recur tools/build.sh
exec build/tools/recur train configs/cartpole_novel.yaml "$@"
