#!/usr/bin/env bash
# The Python package's tests: installs what is missing (Debian's pybind11-dev; numpy, gymnasium,
# pytest, h5py, minari, onnx, onnxruntime, box2d and optuna from PyPI into a virtual environment outside
# the repository), builds the extension and the example env plugin with CMake in build-py/
# (RECUR_PYTHON=ON, CPU-only, tests off) and runs pytest on tools/python/tests.
#   RECUR_PY_VENV  the virtual environment (default /tmp/recur-python-venv; reused when present)
#   RECUR_CLI      the recur executable for the `recur eval` comparison (default build/tools/recur;
#                  that test skips itself without one)
#   RECUR_TMAZE_PLUGIN  the T-maze env plugin the plugin tests load (default: the one built here)
# Extra arguments go to pytest. CI=true turns warnings into errors, as tools/build.sh does.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)

tools/install-deps.sh
if ! dpkg-query -W -f='${Status}' pybind11-dev 2>/dev/null | grep -q "install ok installed"; then
  echo "test-python: installing pybind11-dev"
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends pybind11-dev
fi

venv=${RECUR_PY_VENV:-/tmp/recur-python-venv}
[[ -x $venv/bin/python ]] || python3 -m venv "$venv"
# h5py and minari (with pillow, which Minari 0.5.4's HDF5 storage imports undeclared) read the
# datasets recur.record_dataset writes; a few seconds to install. onnx and onnxruntime check the
# ONNX export (test_onnx_export.py), box2d is Gymnasium's LunarLander for its end-to-end check
# with pygame, which it imports (Gymnasium's [box2d] extra pins box2d-py, built from source).
# optuna: recur tune (test_tune.py); matplotlib: tools/plot_runs.py (test_plot_runs.py).
# popgym (with mazelib, which its labyrinths import): the reference of recur's POPGym envs
# (test_popgym_*.py); mujoco, pinned to the version tools/install-deps.sh installs for recur's
# MuJoCo envs (parity needs the same library build), and imageio (Gymnasium's MuJoCo envs import
# it): the reference of the MuJoCo envs. The tests are in tools/python/tests/.
"$venv/bin/python" -m pip install -q --disable-pip-version-check \
  "numpy>=1.21" "gymnasium>=1.1,<2" "pytest>=7" h5py "minari[hdf5]>=0.5,<0.6" pillow \
  "onnx>=1.12" "onnxruntime>=1.16" "box2d>=2.3.10" pygame "optuna>=4.0" matplotlib \
  "popgym==1.0.7" mazelib "mujoco==3.3.7" imageio

args=(-DCMAKE_BUILD_TYPE=Release -DRECUR_PYTHON=ON -DRECUR_BUILD_TESTS=OFF -DRECUR_CUDA=OFF
      -DPython_EXECUTABLE="$venv/bin/python")
[[ ${CI:-} == true ]] && args+=(-DRECUR_WERROR=ON)
generator=()
[[ -f build-py/CMakeCache.txt ]] || { command -v ninja >/dev/null && generator=(-G Ninja); }
cmake -S . -B build-py "${generator[@]}" "${args[@]}" >/dev/null
cmake --build build-py --target _recur tmaze_plugin -j"$(nproc)"

echo "test-python: dependencies and build took $(($(date +%s) - start)) s"

[[ -n ${RECUR_CLI:-} || ! -x build/tools/recur ]] || export RECUR_CLI=$PWD/build/tools/recur
# The example env plugin, for tools/python/tests/test_plugins.py (which skips without it).
export RECUR_TMAZE_PLUGIN=${RECUR_TMAZE_PLUGIN:-$PWD/build-py/tests/plugins/libtmaze_plugin.so}
rc=0
# pytest's summary line stays the last line of the output (CI reads it).
PYTHONPATH=$PWD/build-py/tools/python "$venv/bin/python" -m pytest -q -p no:cacheprovider \
  tools/python/tests "$@" || rc=$?
if [[ $rc -eq 5 ]]; then
  echo "test-python: pytest collected no tests" >&2
  exit 1
fi
exit $rc
