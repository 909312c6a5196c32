#!/usr/bin/env bash
# Configures and builds recur in build/ (Release). Extra arguments go to the CMake configure step,
# e.g. tools/build.sh -DRECUR_CUDA=OFF. CI=true turns warnings into errors. The generator is
# $CMAKE_GENERATOR when set (CMake reads it; CI sets "Unix Makefiles", CMake's default), else
# Ninja when installed.
set -euo pipefail
cd "$(dirname "$0")/.."
args=(-DCMAKE_BUILD_TYPE=Release)
[[ ${CI:-} == true ]] && args+=(-DRECUR_WERROR=ON)
generator=()
[[ -f build/CMakeCache.txt || -n ${CMAKE_GENERATOR:-} ]] ||
  { command -v ninja >/dev/null && generator=(-G Ninja); }
cmake -S . -B build "${generator[@]}" "${args[@]}" "$@"
cmake --build build -j"$(nproc)"
