#!/usr/bin/env bash
# Configures and builds recur in build/ (Release). Extra arguments go to the CMake configure step,
# e.g. tools/build.sh -DRECUR_CUDA=OFF. CI=true turns warnings into errors. The generator is
# $CMAKE_GENERATOR when set (CMake reads it; CI sets "Unix Makefiles", CMake's default), else
# Ninja when installed. RECUR_BUILD_TARGETS="recur ..." builds only those targets (tools/run.sh: the
# main job needs the `recur` tool alone; the test command builds everything).
set -euo pipefail
cd "$(dirname "$0")/.."
args=(-DCMAKE_BUILD_TYPE=Release)
[[ ${CI:-} == true ]] && args+=(-DRECUR_WERROR=ON)
generator=()
[[ -f build/CMakeCache.txt || -n ${CMAKE_GENERATOR:-} ]] ||
  { command -v ninja >/dev/null && generator=(-G Ninja); }
cmake -S . -B build "${generator[@]}" "${args[@]}" "$@"
targets=()
[[ -n ${RECUR_BUILD_TARGETS:-} ]] && targets=(--target ${RECUR_BUILD_TARGETS})
cmake --build build -j"$(nproc)" "${targets[@]}"
