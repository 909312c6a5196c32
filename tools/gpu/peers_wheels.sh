#!/usr/bin/env bash
# Downloads, here, the wheels that recur's GPU peers need and the device image lacks (the device
# reaches no registry; its Python is 3.12 with torch, numpy 2, opencv-headless, tensorboard,
# psutil, threadpoolctl, filelock, cloudpickle already installed: /work/.library/device/KINDS.md),
# into .whl/ (ignored by .gitignore), checks that what travels fits the run tool's 64 MiB and
# prints the device command (tools/gpu/README.md, "Peers"):
#
#   bash tools/gpu/peers_wheels.sh
#
# The wheels (cp312 manylinux or pure Python; --no-deps, so each dependency is named here):
#   sample-factory 2.1.1     the APPO trainer. Its metadata pins numpy<2 and gymnasium<1; neither
#                            pin is honoured (--no-deps): LunarLander-v3 needs Gymnasium >= 1.0,
#                            and tools/bench/peers/sample_factory_lunar.py patches SF's one NumPy 2
#                            failure. wandb, pyglet and huggingface-hub<1 (also required) are only
#                            imported for W&B, rendering and the Hub: not carried.
#   signal-slot-mp, faster-fifo  SF's process messaging (faster-fifo is a C extension: cp312 wheel)
#   colorlog, tensorboardX   SF's logging and summaries
#   gymnasium 1.2.2, farama-notifications  the env API (the version the peers were checked with)
#   box2d 2.3.10             Box2D for LunarLander (cp312 manylinux wheel; Gymnasium's [box2d]
#                            extra names box2d-py, which has no wheel). pygame (14 MB) is not
#                            carried: the peers stand an empty module in for it.
set -euo pipefail
cd "$(dirname "$0")/../.."
wheels=(sample-factory==2.1.1 signal-slot-mp==1.0.5 faster-fifo==1.5.2 colorlog==6.12.0
  tensorboardx==2.6.5 gymnasium==1.2.2 farama-notifications==0.0.6 box2d==2.3.10)
mkdir -p .whl
# The device README's recipe: CPython 3.12, manylinux x86-64, no dependencies resolved.
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64 \
  -d .whl "${wheels[@]}"
# One version of each: two stop the whole install on the device.
dups=$(find .whl -type f -name '*.whl' -printf '%f\n' | cut -d- -f1 | tr 'A-Z_' 'a-z-' | sort | uniq -d)
[[ -z $dups ]] || { echo "peers_wheels: more than one wheel of: $dups (remove the old ones from .whl/)" >&2; exit 1; }
find .whl -type f -name '*.whl' -printf '%s %f\n' | sort -k2 | awk '{ printf "  %8.1f KiB  %s\n", $1 / 1024, $2 }'

# What travels: tracked files, untracked files git does not ignore, and the carried folders.
tree=$( (git ls-files -z; git ls-files -z --others --exclude-standard) | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1)
whl=$(du -sb .whl | cut -f1)
bundle=0
[[ -d .devbundle ]] && bundle=$(du -sb .devbundle | cut -f1)
mib() { echo $(($1 / 1048576)); }
total=$((tree + whl + bundle))
echo "peers_wheels: working tree $(mib "$tree") MiB + .whl $(mib "$whl") MiB + .devbundle $(mib "$bundle") MiB = $(mib "$total") MiB (limit 64)"
carry='[".whl", ".devbundle"]'
if ((bundle == 0)); then
  carry='[".whl"]'
  echo "peers_wheels: no .devbundle/: the recur rows will be skipped (bash tools/gpu/bundle.sh builds it)"
elif ((total > 64 * 1048576)); then
  echo "peers_wheels: over 64 MiB together: run recur (carry .devbundle) and the peers (carry .whl) in separate calls" >&2
  cat <<'CMD'
device commands (run tool; logs come back under $OUT), one call each:
  carry [".devbundle"]:  bash tools/gpu/peers.sh 540 recur
  carry [".whl"]:        bash tools/gpu/peers.sh 540 cleanrl
  carry [".whl"]:        bash tools/gpu/peers.sh 540 sf
CMD
  exit 0
fi
cat <<CMD
device commands (run tool, carry $carry; logs come back under \$OUT), one call each
(tools/gpu/peers.sh installs .whl/ with pip --target /tmp/site and sets PYTHONPATH itself):
  bash tools/gpu/peers.sh 540 recur,cleanrl
  bash tools/gpu/peers.sh 540 sf
The device README's form, to use the wheels in a command of your own:
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit; ...
CMD
