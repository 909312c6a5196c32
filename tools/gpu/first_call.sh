#!/usr/bin/env bash
# shellcheck disable=SC2086  # $R (common.sh) is a command and its first argument: split on purpose
# The one device call a session can afford, run ON the device machine from the repository root
# after `bash tools/gpu/bundle.sh` (or tools/gpu-check.sh) built and bundled recur here:
#
#   bash tools/gpu/first_call.sh [BUDGET_SECONDS]      # default 540: the run tool allows 600
#
# Why a separate script: a lent GPU comes with 15 minutes of device time for the whole session,
# machine start and transfers included: one full call, and a short second one while the machine is
# still warm (2026-11-30: this call took 341 s, then tools/gpu/peers.sh ran in the 7 minutes left).
# run.sh (every GPU case, sanitizer, all device pairs), speed.sh and peers.sh each fill a call of
# their own. This one takes, in order, what the open issues wait for after the H200 run of
# 2026-11-30 (docs/PERFORMANCE.md, "The H200 run of 2026-11-30"):
#   info.txt          nvidia-smi, driver, `recur info` (CUDA, cuDNN), lscpu
#   new-cases.txt     first the cases of kernels changed since that run (the fused lstm_ln/minGRU
#                     executor, whose column sums were rewritten twice: lanes, then row ranges
#                     and the LayerNorm's two sums in one pass, column_sums_test; the action heads' test
#                     threshold; cuDNN's persist_small_h on cut batches padded to full length),
#                     then the rest of the cases written without a device; one process per case,
#                     PASS/FAIL/SKIP
#   bench-cores.txt   `recur bench rnn-gpu --cell lstm_ln|mingru|mingru_highway` beside cuDNN's
#                     LSTM (issue 37's "within 2x": missed at large B before the column sums)
#   bench-devices.txt the PPO minibatch's stages at B 256 with 2% episode starts and with none
#                     (issue 36: is the 1.55x over the bare cuDNN forward+backward the cut
#                     sequences, run by STANDARD?), then with persist_small_h at 2% and 0.2%
#                     starts (cut sequences padded to T: the persistent kernels take them)
#   bench-train.txt   env steps/s of lunar_lander_gpu.yaml (tower streams on), lunar_lander_gpu_fast
#                     and cartpole_novel_gpu_fast.yaml sync and async, the fast ones also with
#                     device.cudnn_algo persist_small_h, CartPole's with device.cudnn_math tf32
#                     and at H 64 (the CartPole-class 3M goal is learner-bound)
#   summary.txt       one line per section; then the learning checks on cuda/cuda: the GPU
#                     config's time to 200 (beside Sample Factory's 62.8 s), the CartPole-class
#                     config to 475 sync, async, sync with persist_small_h and at H 64 (3.6 s
#                     async with standard), the LunarLander fast config sync on seed 0, the fast config with
#                     tf32 on seeds 0-2 and bf16 on seeds 1-2 (train-*.txt, their eval.csv and
#                     progress.csv), `bench envs --policy` on the tf32 runs
#                     (bench-envs-policy.txt), `bench train` again from the trained fast runs
#                     (run.init_from: bench-train-trained.txt), the cores on the CUDA learner,
#                     then the older GPU cases (old-cases.txt)
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

changed_files='*cuda_sequence_executor_test*,*column_sums_test*,*gpu_policy_test*,*action_heads_test*'
changed_files+=',*cudnn_sequence_executor_test*,*cuda_engine_test*'
new_files='*step_guard_test*,*gae_test*,*proximal_anchor_test*,*state_gather_test*,*low_float_test*'
new_files+=',*learner_kernels_test*,*cuda_learner_tower_streams_test*'
new_files+=',*cuda_learner_device_states_test*,*cuda_step_executor_test*,*cuda_policy_actor_test*'
if section "GPU cases" 60; then
  t0=$SECONDS
  # Changed since the 2026-11-30 run: the fused executor's column sums, the heads test's
  # threshold, cuDNN's persistent algorithm on cut batches, the CUDA PPO engine's critic values
  # for algo.async_anchor_values.
  cases "$out/new-cases.txt" -sf="$changed_files"
  mv "$out/new-cases.txt" "$out/changed-cases.txt"
  [[ -f $out/new-cases.log ]] && mv "$out/new-cases.log" "$out/changed-cases.log"
  cases "$out/new-cases.txt" -sf="$new_files"
  cases "$out/new-cases-sac.txt" -tc='*replay learner on cuDNN*'
  note "changed cases: $(tail -1 "$out/changed-cases.txt"); the other new ones: $(tail -1 "$out/new-cases.txt"); replay learner on cuDNN: $(tail -1 "$out/new-cases-sac.txt")" 0 "$t0"
fi

if section "bench rnn-gpu lstm_ln, mingru, mingru_highway" 60; then
  t0=$SECONDS
  for cell in lstm_ln mingru mingru_highway; do
    timeout 90 $R bin/recur bench rnn-gpu --cell "$cell" --batch 16,256,1024 --hidden 128,256 \
      --seq-len 32 --min-seconds 0.05
  done >"$out/bench-cores.txt" 2>&1
  note "bench rnn-gpu cores" $? "$t0"
fi

if section "bench devices" 70; then
  t0=$SECONDS
  # 2% episode starts (the default) and none: whole sequences are the bare cuDNN rows' shape.
  # Then persist_small_h, which now takes the cut sequences padded to T, at 2% and at 0.2% (a
  # trained LunarLander's rate: episodes of ~500 steps).
  for run in standard:0.02 standard:0 persist_small_h:0.02 persist_small_h:0.002; do
    timeout 60 $R bin/recur bench devices --hidden 128 --envs 1024 --learner-envs 256 \
      --min-seconds 0.05 --stages --cudnn-algo "${run%%:*}" --start-rate "${run#*:}"
  done >"$out/bench-devices.txt" 2>&1
  note "bench devices" $? "$t0"
fi

if section "bench train" 110; then
  t0=$SECONDS
  for cfg in lunar_lander_gpu lunar_lander_gpu_fast cartpole_novel_gpu_fast; do
    echo "== configs/$cfg.yaml"
    timeout 90 $R bin/recur --log-level warn bench train "$root/configs/$cfg.yaml" --updates 10 \
      --modes sync,async --devices cuda/cuda
  done >"$out/bench-train.txt" 2>&1
  # The fast configs' cores are LSTM-128: persist_small_h takes every minibatch now. The
  # CartPole-class config is learner-bound (2026-11-30): tensor-core math for its cuDNN too.
  # And with 40-step episodes: a truncation bootstrap (a policy call) in every group step, the
  # states a trained policy reaches when it hovers to the 1000-step limit (the fast run's
  # env steps/s fell from ~480k to ~250k late in training on 2026-11-30).
  # CartPole at H 64: 475 at 1.57M env steps on 4 of 5 seeds on the CPU (2.10M on the fifth),
  # against 1.57M on all 5 at H 128, for ~4x fewer recurrent FLOPs (docs/PERFORMANCE.md, "Width
  # and envs for the fast configs"): worth it only if the device's learner is >= 1.1x faster.
  # And half as many, twice as wide minibatches (2.10-2.62M env steps to 475 on the CPU against
  # 1.57M: for the 3M env steps/s goal, what the learner's launches cost).
  for run in lunar_lander_gpu_fast:device.cudnn_algo=persist_small_h \
    lunar_lander_gpu_fast:env.options.max_episode_steps=40 \
    cartpole_novel_gpu_fast:device.cudnn_algo=persist_small_h \
    cartpole_novel_gpu_fast:device.cudnn_math=tf32 \
    cartpole_novel_gpu_fast:policy.hidden=64 \
    cartpole_novel_gpu_fast:algo.num_minibatches=4 \
    cartpole_novel_gpu_fast:policy.hidden=64+algo.num_minibatches=4; do
    # KEY=VALUE pairs joined by '+': one --set each (the last row: both CartPole levers at once,
    # 2.49M env steps to 475 on the CPU, as 4 minibatches alone).
    sets=()
    IFS='+' read -ra pairs <<<"${run#*:}"
    for pair in "${pairs[@]}"; do sets+=(--set "$pair"); done
    echo "== configs/${run%%:*}.yaml ${sets[*]}"
    timeout 60 $R bin/recur --log-level warn bench train "$root/configs/${run%%:*}.yaml" \
      --updates 10 --modes sync,async --devices cuda/cuda "${sets[@]}"
  done >>"$out/bench-train.txt" 2>&1
  # The sample-efficient route: lunar_lander.yaml at 256 envs and 64-step rollouts reached a
  # confirmed 200 at 0.33-0.92M env steps on the CPU (fast config: 2.0-3.8M), with 32x its
  # sequential learner steps per env step (docs/PERFORMANCE.md, "Fewer env steps for more learner
  # work"). Its update time says whether that can pay on the device.
  {
    echo "== configs/lunar_lander.yaml --set env.num_envs=256 --set algo.rollout_steps=64"
    timeout 45 $R bin/recur --log-level warn bench train "$root/configs/lunar_lander.yaml" \
      --updates 10 --modes sync,async --devices cuda/cuda --set env.num_envs=256 \
      --set algo.rollout_steps=64 --set run.threads=12
  } >>"$out/bench-train.txt" 2>&1
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

# issue 36: the GPU config's time to 200 (15.7 s on 2026-11-26, before tower streams; Sample
# Factory at the same shape: 62.8 s), then the learning checks of tensor-core math and bf16 data
# on the fast config (one bf16 seed so far: 200 at 5.01M env steps; fp32 seed 0 at 3.28M).
# It stops on Sample Factory's own criterion (run.target_measure train_mean: the mean of the
# last 100 training episodes; SF's 62.8 s was to that), and logs the first evaluation >= 200 on
# the way (docs/PERFORMANCE.md, "The peers' criterion").
section "train gpu config to target" 60 && train_fast gpu lunar_lander_gpu \
  --set run.target_measure=train_mean
# The CartPole-class config is synchronous now: 475 at 1.57M env steps on the CPU where async took
# 2.10-2.62M (docs/PERFORMANCE.md, "Saving at an evaluation"); async reached it at 2.10M in 3.6 s
# on 2026-11-30. Both to the target, then sync with persist_small_h (cut sequences padded).
section "train cartpole fast sync" 30 && train_fast cartpole-fast cartpole_novel_gpu_fast
section "train cartpole fast async" 30 && train_fast cartpole-fast-async \
  cartpole_novel_gpu_fast --set algo.async=true
section "train cartpole fast persist" 30 && train_fast cartpole-fast-persist \
  cartpole_novel_gpu_fast --set device.cudnn_algo=persist_small_h
section "train cartpole fast h64" 30 && train_fast cartpole-fast-h64 \
  cartpole_novel_gpu_fast --set policy.hidden=64
# The LunarLander fast config synchronous: 3.01M, 2.26M, 4.26M env steps to 200 on the CPU against
# 3.77M, 3.51M, 3.77M async, at 382k against 527k env steps/s on the H200: which is first to 200?
section "train fast sync seed 0" 45 && train_fast fast-sync lunar_lander_gpu_fast \
  --set algo.async=false
for seed in 0 1 2; do
  section "train fast tf32 seed $seed" 45 && train_fast "fast-tf32-$seed" lunar_lander_gpu_fast \
    --set device.cudnn_math=tf32 --set run.seed=$seed
done
for seed in 1 2; do
  section "train fast bf16 seed $seed" 45 && train_fast "fast-bf16-$seed" lunar_lander_gpu_fast \
    --set device.cudnn_data=bf16 --set run.seed=$seed
done
# What a step costs this host's CPU in the states a trained lander reaches, beside random actions
# (1.21-1.27x on the 2-core dev machine; the fast run's env steps/s halved late on 2026-11-30).
if section "bench envs --policy" 20; then
  t0=$SECONDS
  for run in "$out"/runs/fast-tf32-*/lunar_lander_gpu_fast-*; do
    [[ -d $run ]] || continue
    timeout 30 $R bin/recur bench envs --policy "$run" --num-envs 64 --steps 256000
  done >"$out/bench-envs-policy.txt" 2>&1
  note "bench envs --policy" $? "$t0"
fi

# The same configs' update on a trained policy's episodes (run.init_from): bench train's rows
# above start from a fresh policy, whose short episodes step cheaper Box2D states and cut every
# learner sequence more often. On the 2-core CPU (lunar_lander.yaml, 2026-12-01) a trained
# policy's rollouts ended 7x fewer episodes, acted 1.4-1.6x slower and trained as fast: 0.76-0.92x
# the fresh rows' env steps/s. Does that explain the H200's 240-325k env steps/s while training
# against bench train's 460k?
if section "bench train --set run.init_from" 40; then
  t0=$SECONDS
  for pair in lunar_lander_gpu_fast:fast-sync cartpole_novel_gpu_fast:cartpole-fast; do
    cfg=${pair%%:*}
    for run in "$out"/runs/"${pair#*:}"/"$cfg"-*/; do
      [[ -d $run ]] || continue
      echo "== configs/$cfg.yaml from $run"
      timeout 60 $R bin/recur --log-level warn bench train "$root/configs/$cfg.yaml" \
        --updates 10 --modes sync,async --devices cuda/cuda --set run.init_from="$run"
    done
  done >"$out/bench-train-trained.txt" 2>&1
  note "bench train --set run.init_from" $? "$t0"
fi

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

if section "older GPU cases" 40; then
  t0=$SECONDS
  cases "$out/old-cases.txt" -tc='*cuda*,*cudnn*,*gpu*,*kernel*,*device*' \
    -sfe="$new_files,$changed_files"
  note "older GPU cases: $(tail -1 "$out/old-cases.txt")" 0 "$t0"
fi

for d in "$out"/runs/*/*/; do
  [[ -d $d ]] || continue
  run=$(basename "$(dirname "$d")")
  cp "$d/eval.csv" "$out/train-$run-eval.csv" 2>/dev/null
  cp "$d/progress.csv" "$out/train-$run-progress.csv" 2>/dev/null
done
rm -rf "$out/runs"
pack_out info.txt summary.txt changed-cases.txt new-cases.txt bench-cores.txt bench-devices.txt bench-train.txt
echo "first-call: done in $((SECONDS - start)) s; logs in $out (all of them in logs.tar.gz)"
