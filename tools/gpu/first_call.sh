#!/usr/bin/env bash
# shellcheck disable=SC2086  # $R (common.sh) is a command and its first argument: split on purpose
# The one device call a session can afford, run ON the device machine from the repository root
# after `bash tools/gpu/bundle.sh` (or tools/gpu-check.sh) built and bundled recur here:
#
#   bash tools/gpu/first_call.sh [BUDGET_SECONDS]      # default 540: the run tool allows 600
#
# Why a separate script: a lent GPU now comes with 15 minutes of device time for the whole session,
# machine start and transfers included, so one full call is what fits, perhaps a short second one.
# run.sh (every GPU case, sanitizer, all device pairs), speed.sh (issue 15's profile) and peers.sh
# (Sample Factory, CleanRL) each fill a call on their own. This one takes, in order of what the
# open issues wait for, what has never run on a GPU and the figures they ask for:
#   info.txt          nvidia-smi, driver, `recur info` (CUDA, cuDNN), lscpu
#   new-cases.txt     the GPU test cases written without a device (issues 36, 37): the device
#                     learner's kernels (GAE, async anchor, step guard, state gather), the
#                     deferred CUDA engine and its rollout math and parameter check,
#                     device-resident initial states, the fused lstm_ln/minGRU sequence executor
#                     and step kernels (mingru_highway's too), the whole policy on the GPU; one
#                     process per case, PASS/FAIL/SKIP
#   bench-cores.txt   `recur bench rnn-gpu --cell lstm_ln|mingru|mingru_highway` beside cuDNN's
#                     LSTM (issue 37); cuDNN's LSTM with --math fma,tf32,fp16 and
#                     --data fp32,fp16,bf16 (issue 36)
#   bench-devices.txt the PPO minibatch against the bare cuDNN forward+backward (issue 36, --stages)
#   bench-train.txt   env steps/s of lunar_lander_gpu.yaml, lunar_lander_gpu_fast.yaml and
#                     cartpole_novel_gpu_fast.yaml (the CartPole-class row), sync and async,
#                     cuda/cuda (issue 36's table), the first also with
#                     device.cudnn_math tf32, device.cudnn_data bf16 and fp16, and
#                     device.tower_streams 2, the fast one also with env.groups 2
#   train-fast.txt    lunar_lander_gpu_fast.yaml on cuda/cuda to its first evaluation >= 200:
#                     the time to target (eval.csv and progress.csv kept in the archive);
#                     train-cartpole-fast.txt: cartpole_novel_gpu_fast.yaml to its 475
#   summary.txt       one line per section: rc, seconds; the cores' CartPoleNoVel runs on the
#                     CUDA learner; recurrent SAC's learner on cuDNN and on the CPU (issue 35:
#                     sac-learner.txt, train-sac-*-progress.csv); the fast config with
#                     device.cudnn_data bf16 to its target; `bench envs` at 1024 envs x
#                     1..16 threads, with --groups;
#                     then the older GPU cases if time is left (old-cases.txt)
# Everything is packed into logs.tar.gz (the run tool returns 8 files); sections that would start
# past the budget are skipped and listed in skipped.txt.
set -uo pipefail
# shellcheck source=tools/gpu/common.sh
source "$(dirname "$0")/common.sh"
summary=$out/summary.txt
: >"$summary"

# note NAME RC T0: one summary line for a section.
note() { echo "$1 rc=$2 $((SECONDS - $3)) s" | tee -a "$summary"; }

# cases FILE FILTER...: every test case passing the doctest filters (run_cases, common.sh), the
# failures' output into FILE's .log twin.
cases() {
  local file=$1
  shift
  $R bin/recur_tests --list-test-cases --no-intro=true "$@" 2>/dev/null |
    run_cases "$file" "${file%.txt}.log" 90 >/dev/null
}

section info 10 && {
  nvidia-smi -L
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  $R bin/recur info
  lscpu
} >"$out/info.txt" 2>&1

new_files='*step_guard_test*,*gae_test*,*proximal_anchor_test*,*state_gather_test*,*low_float_test*'
new_files+=',*learner_kernels_test*,*cuda_engine_test*,*cuda_learner_tower_streams_test*'
new_files+=',*cuda_learner_device_states_test*,*cuda_sequence_executor_test*,*gpu_policy_test*'
new_files+=',*cuda_step_executor_test*,*cuda_policy_actor_test*,*cudnn_sequence_executor_test*'
if section "new GPU cases" 60; then
  t0=$SECONDS
  cases "$out/new-cases.txt" -sf="$new_files"
  # issue 35: recurrent SAC's and TD3's replay learner with its cores on cuDNN (never run on a GPU).
  cases "$out/new-cases-sac.txt" -tc='*replay learner on cuDNN*'
  note "new GPU cases: $(tail -1 "$out/new-cases.txt"); replay learner on cuDNN: $(tail -1 "$out/new-cases-sac.txt")" 0 "$t0"
fi

if section "bench rnn-gpu lstm_ln, mingru, mingru_highway" 60; then
  t0=$SECONDS
  for cell in lstm_ln mingru mingru_highway; do
    timeout 90 $R bin/recur bench rnn-gpu --cell "$cell" --batch 16,256,1024 --hidden 128,256 \
      --seq-len 32 --min-seconds 0.05
  done >"$out/bench-cores.txt" 2>&1
  # issue 36 part 2: cuDNN's LSTM with tensor-core math beside FMA, and on 16-bit data with fp32
  # master weights (device-resident rows).
  timeout 75 $R bin/recur bench rnn-gpu --cell lstm --batch 256,1024 --hidden 128,256 \
    --seq-len 32 --min-seconds 0.05 --no-cpu --math fma,tf32,fp16 --data fp32,fp16,bf16 \
    >>"$out/bench-cores.txt" 2>&1
  note "bench rnn-gpu cores" $? "$t0"
fi

if section "bench devices" 45; then
  t0=$SECONDS
  timeout 90 $R bin/recur bench devices --hidden 128,256 --envs 1024 --learner-envs 64,256 \
    --min-seconds 0.05 --stages >"$out/bench-devices.txt" 2>&1
  note "bench devices" $? "$t0"
fi

if section "bench train" 90; then
  t0=$SECONDS
  for cfg in lunar_lander_gpu lunar_lander_gpu_fast cartpole_novel_gpu_fast; do
    echo "== configs/$cfg.yaml"
    timeout 90 $R bin/recur --log-level warn bench train "$root/configs/$cfg.yaml" --updates 10 \
      --modes sync,async --devices cuda/cuda
  done >"$out/bench-train.txt" 2>&1
  # device.cudnn_math tf32: the learner's cuDNN GEMMs on tensor cores; device.cudnn_data bf16 and
  # fp16: cuDNN on 16-bit data (fp32 master weights).
  for set in device.cudnn_math=tf32 device.cudnn_data=bf16 device.cudnn_data=fp16; do
    echo "== configs/lunar_lander_gpu.yaml --set $set"
    timeout 45 $R bin/recur --log-level warn bench train "$root/configs/lunar_lander_gpu.yaml" \
      --updates 10 --modes sync --devices cuda/cuda --set $set
  done >>"$out/bench-train.txt" 2>&1
  # device.tower_streams 2: the two LSTM-256 towers' cores overlapping in the learner.
  echo "== configs/lunar_lander_gpu.yaml --set device.tower_streams=2" >>"$out/bench-train.txt"
  timeout 60 $R bin/recur --log-level warn bench train "$root/configs/lunar_lander_gpu.yaml" \
    --updates 10 --modes sync,async --devices cuda/cuda --set device.tower_streams=2 \
    >>"$out/bench-train.txt" 2>&1
  # env.groups 2: the GPU actor's act (one CUDA graph per group) behind the other half's stepping.
  echo "== configs/lunar_lander_gpu_fast.yaml --set env.groups=2" >>"$out/bench-train.txt"
  timeout 60 $R bin/recur --log-level warn bench train "$root/configs/lunar_lander_gpu_fast.yaml" \
    --updates 10 --modes sync,async --devices cuda/cuda --set env.groups=2 \
    >>"$out/bench-train.txt" 2>&1
  note "bench train" $? "$t0"
fi

# train_fast NAME [CONFIG [--set KEY=VALUE...]]: CONFIG (default lunar_lander_gpu_fast) on
# cuda/cuda to its target, within what the budget leaves (at most 180 s); train-NAME.txt, the
# run under runs/NAME.
train_fast() {
  local name=$1 cfg=${2:-lunar_lander_gpu_fast}
  shift $(($# > 1 ? 2 : 1))
  local t0=$SECONDS limit=$(($(left) - 60))
  ((limit > 180)) && limit=180
  timeout "$limit" $R bin/recur --log-level info train "$root/configs/$cfg.yaml" \
    --set device.actor=cuda --set device.learner=cuda --set run.output_dir="$out/runs/$name" \
    --set run.tensorboard=false "$@" >"$out/train-$name.txt" 2>&1
  note "train $name (limit $limit s)" $? "$t0"
  tail -3 "$out/train-$name.txt" | tee -a "$summary"
}

section "train fast config to target" 60 && train_fast fast
# issue 36's CartPole-class goal: 3M env steps/s with a config that learns (475 at 2.6M steps on
# the CPU); a minute at most on the device.
section "train cartpole fast config to target" 45 && train_fast cartpole-fast cartpole_novel_gpu_fast

# issue 37: both new cores through `recur train` with the CUDA learner and actor.
for core in lstm_ln mingru mingru_highway; do
  section "train $core on cuda" 30 || continue
  t0=$SECONDS
  timeout 60 $R bin/recur --log-level warn train "$root/configs/cartpole_novel.yaml" \
    --set policy.core=$core --set device.actor=cuda --set device.learner=cuda \
    --set run.stop_at_target=true --set run.output_dir="$out/runs/$core" \
    --set run.tensorboard=false >"$out/train-$core.txt" 2>&1
  note "train $core cuda/cuda" $? "$t0"
  tail -2 "$out/train-$core.txt" | tee -a "$summary"
done

# issue 35: recurrent SAC's learner with its towers on cuDNN (device.learner cuda) against the CPU
# learner on this host: the same short run as tools/bench/offpolicy_speed.sh (3000 updates of
# B 32 x 33 rows, LSTM 64); updates/s = n_updates / learn_time_s of the copied progress.csv.
if section "sac learner cuda vs cpu" 60; then
  t0=$SECONDS
  for learner in cuda cpu; do
    echo "== recurrent SAC, device.learner $learner"
    timeout 60 $R bin/recur --log-level warn train "$root/configs/pendulum_novel_sac.yaml" \
      --set run.total_env_steps=4000 --set offpolicy.learning_starts=1000 \
      --set run.eval_every=0 --set run.final_eval_episodes=1 --set run.stop_at_target=false \
      --set device.actor=cpu --set device.learner=$learner \
      --set run.output_dir="$out/runs/sac-$learner" --set run.tensorboard=false
  done >"$out/sac-learner.txt" 2>&1
  note "sac learner cuda vs cpu" $? "$t0"
fi

# device.cudnn_data bf16: the learning check of 16-bit data, the fast config to its target as
# train-fast above (one seed here; the 3 seeds are a later call's).
section "train fast config bf16 to target" 60 && train_fast fast-bf16 lunar_lander_gpu_fast --set device.cudnn_data=bf16

# algo.bptt_steps on the CUDA learner: its engine sees the cut rollout as an ordinary one.
if section "train bptt on cuda" 30; then
  t0=$SECONDS
  timeout 60 $R bin/recur --log-level warn train "$root/configs/cartpole_novel.yaml" \
    --set algo.bptt_steps=8 --set device.actor=cuda --set device.learner=cuda \
    --set run.stop_at_target=true --set run.output_dir="$out/runs/bptt" \
    --set run.tensorboard=false >"$out/train-bptt.txt" 2>&1
  note "train lstm bptt 8 cuda/cuda" $? "$t0"
  tail -2 "$out/train-bptt.txt" | tee -a "$summary"
fi

if section "bench envs" 60; then
  t0=$SECONDS
  timeout 120 $R bin/recur bench envs --env LunarLander-v3 --num-envs 1024 --steps 100000 \
    --repeats 2 --threads 1,4,8,12,16 --act-us 200 --groups >"$out/bench-envs.txt" 2>&1
  note "bench envs" $? "$t0"
fi

if section "older GPU cases" 40; then
  t0=$SECONDS
  cases "$out/old-cases.txt" -tc='*cuda*,*cudnn*,*gpu*,*kernel*,*device*' -sfe="$new_files"
  note "older GPU cases: $(tail -1 "$out/old-cases.txt")" 0 "$t0"
fi

for d in "$out"/runs/*/*/; do
  [[ -d $d ]] || continue
  run=$(basename "$(dirname "$d")")
  cp "$d/eval.csv" "$out/train-$run-eval.csv" 2>/dev/null
  cp "$d/progress.csv" "$out/train-$run-progress.csv" 2>/dev/null
done
rm -rf "$out/runs"
pack_out info.txt summary.txt new-cases.txt bench-cores.txt bench-devices.txt bench-train.txt skipped.txt
echo "first-call: done in $((SECONDS - start)) s; logs in $out (all of them in logs.tar.gz)"
