#!/usr/bin/env bash
# recur beside its GPU peers on LunarLander-v3 (issue 36), run ON the device machine from the
# repository root after `bash tools/gpu/peers_wheels.sh` put the peers' wheels in .whl/ (and
# `bash tools/gpu/bundle.sh` built recur into .devbundle/, for the recur rows):
#
#   bash tools/gpu/peers.sh [BUDGET_SECONDS] [PARTS]   # default 540 and recur,cleanrl,sf,resets
#
# PARTS, comma-separated, in the order run: recur (`recur bench train` and `recur train` to the
# target on configs/lunar_lander_gpu.yaml, and the throughput shape), cleanrl
# (tools/bench/peers/cleanrl_lstm_ppo.py), sf (tools/bench/peers/sample_factory_lunar.py,
# Sample Factory 2.1.1), resets (the learner's sequence pass with episode starts inside, at
# TorchRL's RNN benchmark shape B 128, T 128, H 256, 3% starts: `recur bench rnn-gpu --start-rate`
# for cuDNN's LSTM on cut sequences and the fused lstm_ln / minGRU kernels, beside
# tools/bench/bench_torch_peer.py's nn.LSTM without resets, split-and-pad, packed and per-step
# loop; about a minute). All three peers in one 10-minute call do not fit when the peers are slow to
# the target: split them, e.g. `peers.sh 540 recur,cleanrl` and `peers.sh 540 sf`.
# Rows (the same env, Gymnasium-equal LunarLander-v3; the same shapes, GPU_SCALE.md section 4):
#   gpu shape   configs/lunar_lander_gpu.yaml: 1024 envs, T 32, LSTM-256 actor and critic, heads
#               [64], 4 epochs x 4 minibatches; fp32 (TF32 off) to the target 200, capped; then
#               TF32 on for throughput only.
#   fast shape  encoder [128], one shared LSTM-128, linear heads, 1 epoch x 4 minibatches, 4096 envs:
#               throughput only (recur: the same overrides on the gpu config).
# Env stepping: recur 12 threads (the config's run.threads), the CleanRL peer 12 worker processes,
# Sample Factory 16 rollout workers (its default, the core count; 1024 envs need a worker count
# dividing 512). recur's Python envs are not used by the peers here: the device has no build of
# recur's Python extension for its Python 3.12 (tools/gpu/README.md).
# Writes into $OUT (or ./gpu-out), all packed into logs.tar.gz at the end, with info.txt,
# peers-summary.txt (one block per row: its command, exit code, wall time, RESULT line or recur's
# last lines) and skipped.txt beside it; dmon.txt is `nvidia-smi dmon -s u` over the whole run.
set -uo pipefail
# shellcheck source=tools/gpu/common.sh
source "$(dirname "$0")/common.sh"
parts=",${2:-recur,cleanrl,sf,resets},"
summary=$out/peers-summary.txt
cfg=$root/configs/lunar_lander_gpu.yaml
export PYTHONUNBUFFERED=1 OMP_WAIT_POLICY=PASSIVE
# PEERS_PYTHON / PEERS_DEVICE: another interpreter and `cpu`, to try the script where there is no
# GPU (the rows' shapes are the GPU's: minutes each on a small machine).
py=${PEERS_PYTHON:-python3}
dev=${PEERS_DEVICE:-cuda}

# The carried wheels (tools/gpu/peers_wheels.sh), as the device README installs them.
if ! "$py" -c "import sample_factory, gymnasium, Box2D" 2>/dev/null && compgen -G "$root/.whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site "$root"/.whl/*.whl || echo "peers: pip install of .whl/ failed" | tee -a "$out/skipped.txt"
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi

section info 10 && {
  nvidia-smi -L
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  nvidia-smi -q -d CLOCK | head -40
  lscpu
  nproc
  "$py" -c "import torch; print('torch', torch.__version__, 'cudnn', torch.backends.cudnn.version())"
  "$py" -m pip list 2>/dev/null | grep -iE '^(sample|gymnasium|box2d|numpy|torch|faster|signal)'
  [[ -d $bundle ]] && $R bin/recur info
} >"$out/info.txt" 2>&1
dmon_pid=
if command -v nvidia-smi >/dev/null; then
  nvidia-smi dmon -s u -o T >"$out/dmon.txt" 2>&1 &
  dmon_pid=$!
fi

# row NAME NEEDED_S CAP_S CMD...: one run, timed, under min(CAP_S, what is left - 10); its
# output in $out/NAME.txt, its summary (RESULT line, else the last 3 lines) in peers-summary.txt.
row() {
  local name=$1 need=$2 cap=$3
  shift 3
  section "$name" "$need" || return 0
  local limit=$(($(left) - 10))
  ((limit > cap)) && limit=$cap
  local t0=$SECONDS
  echo "$(date +%T) start $name" >>"$out/dmon.txt"
  timeout "$limit" "$@" >"$out/$name.txt" 2>&1
  local rc=$?
  echo "$(date +%T) end $name" >>"$out/dmon.txt"
  {
    echo "== $name rc=$rc wall $((SECONDS - t0)) s (limit $limit s)$( ((rc == 124)) && echo ': stopped at the limit')"
    echo "   $*"
    grep -E '^(RESULT|TARGET)' "$out/$name.txt" || tail -3 "$out/$name.txt"
  } | tee -a "$summary"
}

if [[ $parts == *,recur,* ]]; then
  if [[ -d $bundle ]]; then
    fast=(--set 'policy.encoder=[128]' --set policy.hidden=128 --set policy.shared_core=true
      --set 'policy.head=[]' --set algo.epochs=1 --set env.num_envs=4096)
    row recur-gpu-bench 60 120 $R bin/recur --log-level warn bench train "$cfg" --updates 20 \
      --modes sync,async --devices cuda/cuda
    row recur-gpu-target 40 150 $R bin/recur --log-level info train "$cfg" --set device.actor=cuda \
      --set device.learner=cuda --set run.output_dir="$out/runs" --set run.tensorboard=false \
      --set run.stop_at_target=true
    row recur-fast-bench 40 90 $R bin/recur --log-level warn bench train "$cfg" --updates 10 \
      --modes sync,async --devices cuda/cuda "${fast[@]}"
    row recur-fast-bench-tf32 40 90 $R bin/recur --log-level warn bench train "$cfg" --updates 10 \
      --modes sync --devices cuda/cuda "${fast[@]}" --set device.cudnn_math=tf32
    # The peers' target is the mean of the last 100 training episodes; recur's progress.csv has
    # the same (return_mean, SB3's ep_rew_mean): its first row >= 200 is the like-for-like time.
    for f in "$out"/runs/*/progress.csv; do
      [[ -f $f ]] || continue
      cp "$f" "$out/recur-gpu-target-progress.csv"
      awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        $col["return_mean"] >= 200 { printf "   recur training-episode mean >= 200: env_steps %s time_s %s return_mean %s\n", $col["env_steps"], $col["time_s"], $col["return_mean"]; found = 1; exit }
        END { if (!found) print "   recur training-episode mean never reached 200 in progress.csv" }' "$f" | tee -a "$summary"
    done
    rm -rf "$out/runs"
  else
    echo "SKIPPED recur: no .devbundle/ (bash tools/gpu/bundle.sh here, carry .devbundle)" | tee -a "$out/skipped.txt"
  fi
fi

if [[ $parts == *,cleanrl,* ]]; then
  peer=("$py" "$root/tools/bench/peers/cleanrl_lstm_ppo.py" --device "$dev" --env-workers 12)
  # --max-seconds ends the run after an update, RESULT printed, before `timeout` would kill it.
  row cleanrl-gpu-target 60 240 "${peer[@]}" --preset gpu --tf32 off --stop-at-target \
    --max-seconds $(( $(left) < 240 ? $(left) - 40 : 200 ))
  row cleanrl-gpu-tf32 40 90 "${peer[@]}" --preset gpu --tf32 on --total-steps 655360 --max-seconds 70
  row cleanrl-fast 40 90 "${peer[@]}" --preset fast --tf32 off --total-steps 1310720 --max-seconds 70
  row cleanrl-fast-tf32 40 90 "${peer[@]}" --preset fast --tf32 on --total-steps 1310720 --max-seconds 70
fi

if [[ $parts == *,sf,* ]]; then
  sf=("$py" "$root/tools/bench/peers/sample_factory_lunar.py" --device "${dev/cuda/gpu}" --workers 16)
  # --max-seconds ends SF cleanly (its RESULT line printed) before `timeout` would kill it.
  row sf-gpu-target 60 300 "${sf[@]}" --preset gpu --tf32 off --stop-at-target \
    --max-seconds $(( $(left) < 300 ? $(left) - 30 : 270 ))
  row sf-gpu-tf32 50 90 "${sf[@]}" --preset gpu --tf32 on --max-seconds 60
  # 4096 envs: SF's default decorrelation (each of a worker's 256 envs stepped a different number
  # of frames first) had not finished after 60 s on the H200 (2026-11-30): no sample. Off here.
  row sf-fast 50 90 "${sf[@]}" --preset fast --tf32 off --max-seconds 60 \
    -- --decorrelate_envs_on_one_worker=False
fi

if [[ $parts == *,resets,* ]]; then
  # Input 64: the thread of TorchRL's benchmark gives no input width; 64 is an encoder's.
  shape=(--batch 128 --hidden 256 --seq-len 128 --input 64 --start-rate 0.03 --min-seconds 0.1)
  if [[ -d $bundle ]]; then
    for cell in lstm lstm_ln mingru; do
      row "resets-recur-$cell" 15 60 $R bin/recur bench rnn-gpu --cell "$cell" --no-cpu "${shape[@]}"
    done
  fi
  modes=torch-gemm,torch-seq-fwd,torch-seq-fwdbwd
  for way in pad pack loop; do modes+=",torch-seq-$way-fwd,torch-seq-$way-fwdbwd"; done
  row resets-torch 20 90 "$py" "$root/tools/bench/bench_torch_peer.py" --device "$dev" \
    "${shape[@]}" --modes "$modes"
fi

[[ -n $dmon_pid ]] && kill "$dmon_pid" 2>/dev/null
pack_out info.txt peers-summary.txt skipped.txt
echo "gpu-peers: done in $((SECONDS - start)) s; logs in $out (all of them in logs.tar.gz)"
