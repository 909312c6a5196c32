#!/usr/bin/env bash
# Installs what recur needs to build and test, from Debian 12 packages; skips what is present.
# Safe to run again. Needs root (or sudo) only when something is missing.
#   tools/install-deps.sh            C++ build and test dependencies
#   tools/install-deps.sh --python   also the PyPI packages of the helper scripts (golden data, plots)
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config clang-format
  libeigen3-dev libbox2d-dev libyaml-cpp-dev libspdlog-dev libfmt-dev doctest-dev libcli11-dev
  nlohmann-json3-dev
  libcairo2-dev libhdf5-dev libavformat-dev libavcodec-dev libavutil-dev libswscale-dev
  libprotobuf-dev protobuf-compiler libboost-dev libssl-dev
  libopenmpi-dev openmpi-bin libonnx-dev
  libxsmm-dev # small matrix products without packing (cmake/RecurXsmm.cmake)
  clang libclang-rt-14-dev # libFuzzer for tools/fuzz/run.sh (Debian 12's clang is clang 14)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all Debian packages present"
fi

if [[ ${1:-} == --python ]]; then
  python3 -m pip install -q -r "$(dirname "$0")/requirements.txt"
fi

# MuJoCo (envs/mujoco, cmake/RecurMuJoCo.cmake): the C library and headers of PyPI's mujoco 3.3.7
# wheel, the last monolithic one (Debian's 2.2.2 is old, built without AVX, and its results drift
# from Gymnasium's Python envs), plus gymnasium 1.4.0 for its model XMLs only
# (gymnasium/envs/mujoco/assets/). Nothing is imported: pip unpacks both into one directory.
# tools/test-python.sh pins the same mujoco, so recur's envs and Gymnasium's step the same library.
mujoco_dir=${RECUR_MUJOCO_DIR:-/usr/local/lib/recur/mujoco-3.3.7}
if [[ -f $mujoco_dir/mujoco/libmujoco.so.3.3.7 && -f $mujoco_dir/mujoco/include/mujoco/mujoco.h &&
      -d $mujoco_dir/gymnasium/envs/mujoco/assets ]]; then
  echo "install-deps: MuJoCo 3.3.7 present in $mujoco_dir"
else
  echo "install-deps: installing MuJoCo 3.3.7 and Gymnasium's model XMLs into $mujoco_dir"
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  if ! python3 -m pip --version >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends python3-pip
  fi
  $sudo mkdir -p "$mujoco_dir"
  # --target writes only into $mujoco_dir, so a Debian python3 marked externally managed may too.
  if ! $sudo env PIP_ROOT_USER_ACTION=ignore PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install -q \
    --no-deps --target "$mujoco_dir" mujoco==3.3.7 gymnasium==1.4.0; then
    # Not fatal: the build then has no MuJoCo (RECUR_MUJOCO=AUTO), lists the MuJoCo ids as
    # unavailable, and their tests skip saying why.
    echo "install-deps: WARNING: could not install MuJoCo from PyPI into $mujoco_dir;" \
      "building without the MuJoCo envs (run tools/install-deps.sh again where PyPI is reachable)" >&2
  fi
fi

# CUDA and cuDNN are not Debian packages here: they come with the machine in /usr/local/cuda.
if [[ -x /usr/local/cuda/bin/nvcc ]] || command -v nvcc >/dev/null 2>&1; then
  echo "install-deps: CUDA toolkit found; CUDA code will be compiled (RECUR_CUDA=AUTO)"
else
  echo "install-deps: no CUDA toolkit; building the CPU-only product (RECUR_CUDA=AUTO)"
fi
