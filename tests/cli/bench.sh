#!/usr/bin/env bash
# recur bench (tests/cli/lib.sh says how cases run).
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"

case_bench_envs() {
  run_ok recur bench envs --env CartPole-v1 --steps 20000 --repeats 1 --num-envs 4 --threads 2
  expect_text 'CartPole-v1'
}

# Without a GPU (CI) the GPU benchmark names what is missing, exit 2.
case_bench_rnn_gpu_without_gpu() {
  run_status 2 recur bench rnn-gpu
  expect_text 'recur bench rnn-gpu: (no usable GPU|this build of recur has no CUDA support)'
}

# recur bench devices: the CPU rows at tiny sizes (the GPU rows need a GPU; the note says why
# they are absent).
case_bench_devices_cpu() {
  run_ok recur bench devices --envs 1,4 --learner-envs 2 --hidden 8 --seq-len 4 \
    --min-seconds 0.01 --csv
  expect_text '(?s)actor,cpu,4,8,1,.*learner,cpu,2,8,4,'
}

# --start-rate: 0 (whole sequences) runs; outside [0, 1] is refused with the option named.
case_bench_devices_start_rate() {
  run_ok recur bench devices --envs 1 --learner-envs 2 --hidden 8 --seq-len 4 --min-seconds 0.01 \
    --start-rate 0 --no-gpu
  expect_text 'episode starts 0 per env step'
  run_status 2 recur bench devices --start-rate 1.5 --no-gpu
  expect_text '--start-rate'
}

# --policy: a tiny run's env stepped with its policy's actions and with random ones; a path that
# holds no checkpoint is named in the error.
case_bench_envs_policy() {
  recur --log-level warn train "$CONFIGS/cartpole.yaml" --set run.total_env_steps=512 \
    --set "run.output_dir=$tmp" --set run.final_eval_episodes=1 >/dev/null 2>&1
  run_ok recur bench envs --policy "$(echo "$tmp"/cartpole-*)" --num-envs 4 --steps 400
  expect_text '(?s)CartPole-v1 x4 envs.*policy +[0-9.]+ +[0-9.]+ +[0-9]+.*random +[0-9.]+ +0\.00 .*policy / random env cost: [0-9.]+x'
  run_status 2 recur bench envs --policy "$tmp/no-such-run" --steps 10
  expect_text 'no-such-run'
}

# --cudnn-algo: named in the header; a name cuDNN has no algorithm for is refused with the option.
case_bench_devices_cudnn_algo() {
  run_ok recur bench devices --envs 1 --learner-envs 2 --hidden 8 --seq-len 4 --min-seconds 0.01 \
    --cudnn-algo persist_small_h --no-gpu
  expect_text 'cuDNN algo persist_small_h\)'
  run_status 2 recur bench devices --cudnn-algo persistent --no-gpu
  expect_text '--cudnn-algo'
}

# recur bench scan: minGRU's sequential and chunked scans at tiny sizes, T below and above the
# thread count and B = 1 (split over j); the bench itself fails when the two scans disagree.
case_bench_scan() {
  run_ok recur bench scan --batch 1,3 --hidden 5 --seq-len 1,7 --threads 1,3 --min-seconds 0.01 --csv
  expect_text '(?s)1,5,1,1,.*3,5,7,3,[0-9.]+,[0-9.]+,[0-9.]+,'
}

# recur bench rnn: every row at tiny sizes for a 3-layer mingru_highway (its layers k >= 1 share
# one roofline GEMM shape, timed once), the faster of its two GEMM rows at 100% of the roofline
# and the other at or below it, and an unknown cell named with the allowed ones.
case_bench_rnn() {
  run_ok recur bench rnn --cell mingru_highway --layers 3 --batch 2 --hidden 4 --seq-len 3 \
    --min-seconds 0.01 --csv
  local g='[0-9.]+,[0-9]+,[0-9.]+'
  expect_text "(?s)gemm,2,4,1,$g,(1\\.0000\ngemm-eigen,2,4,1,$g,(1\\.0000|0\\.[0-9]+)|0\\.[0-9]+\ngemm-eigen,2,4,1,$g,1\\.0000)\n.*step,2,4,1,.*vanilla,2,4,1,.*seq-fwd,2,4,3,.*seq-fwd\\+bwd,2,4,3,"
}

# --start-rate: the sequence rows with episode starts inside (the header says the rate); outside
# [0, 1] is refused with the option named, by rnn and rnn-gpu alike.
case_bench_rnn_start_rate() {
  run_ok recur bench rnn --cell lstm_ln --batch 2 --hidden 4 --seq-len 5 --min-seconds 0.01 \
    --start-rate 0.3
  expect_text "(?s)episode starts 0.3 of the sequence rows' timesteps.*seq-fwd\\+bwd +2 +4 +5 "
  run_status 2 recur bench rnn --start-rate 1.5
  expect_text '--start-rate'
  run_status 2 recur bench rnn-gpu --start-rate -0.1
  expect_text '--start-rate'
}

case_bench_rnn_bad_cell() {
  run_status 2 recur bench rnn --cell bogus
  expect_text "cell type 'bogus' is unknown; use lstm, gru, rnn_tanh, rnn_relu, mingru, mingru_highway or lstm_ln"
}

case_bench_rnn_gpu_bad_math() {
  run_status 2 recur bench rnn-gpu --math fma,bf8
  expect_text "unknown cuDNN math 'bf8': expected fma, tf32 or fp16"
}

case_bench_rnn_gpu_bad_data() {
  run_status 2 recur bench rnn-gpu --data fp32,fp8
  expect_text "unknown cuDNN RNN data type 'fp8': expected fp32, fp16 or bf16"
}

case_bench_scan_bad_threads() {
  run_status 2 recur bench scan --threads 0
  expect_text 'recur bench scan: --threads 0 \(expected counts from 1 to 256\)'
}

# recur bench train: device pairs side by side (cpu/cpu and auto/auto, which resolves to cpu/cpu
# without a GPU), rows named by the resolved devices.
case_bench_train_devices() {
  run_ok recur --log-level warn bench train "$CONFIGS/cartpole_novel.yaml" --updates 1 \
    --modes sync --devices cpu/cpu,auto/auto --set env.num_envs=4 --set algo.rollout_steps=16 \
    --set algo.num_minibatches=1
  expect_text <<'END'
cpu/cpu +sync +1 .*
(cpu|cuda)/(cpu|cuda) +sync +1 .*
...
.*x env steps/s
END
}

# run.init_from: bench train times a trained policy (the header says which); a policy of other
# settings is refused, naming the keys that differ.
case_bench_train_init_from() {
  recur --log-level warn train "$CONFIGS/cartpole_novel.yaml" --set run.total_env_steps=512 \
    --set "run.output_dir=$tmp" --set run.final_eval_episodes=1 --set run.eval_every=0 >/dev/null 2>&1
  local run
  run=$(echo "$tmp"/cartpole_novel-*)
  run_ok recur --log-level warn bench train "$CONFIGS/cartpole_novel.yaml" --updates 1 \
    --modes sync --set env.num_envs=4 --set algo.rollout_steps=16 --set algo.num_minibatches=1 \
    --set "run.init_from=$run"
  expect_text <<'END'
policy: from .*cartpole_novel-.*
devices .* episodes
cpu/cpu +sync +1 .*
END
  run_status 2 recur --log-level warn bench train "$CONFIGS/cartpole_novel.yaml" --updates 1 \
    --set "run.init_from=$run" --set policy.hidden=8
  expect_text 'run.init_from = .*best.safetensors: its policy does not fit this config.s \(core.hidden: 8 here, 64 in the checkpoint\)'
}

# SAC and TD3 time their own algorithm (the header and the gradient-update column say so; a SAC
# config was once timed as PPO): the warm-up collects learning_starts, then every timed iteration
# trains. Their one mode is sync; async is refused before any training.
case_bench_train_offpolicy() {
  local tiny=(--set env.num_envs=2 --set offpolicy.steps_per_iteration=8
    --set offpolicy.learning_starts=8 --set offpolicy.batch_size=2 --set offpolicy.seq_len=4
    --set policy.hidden=8 --set policy.encoder=[8] --set policy.head=[8])
  run_ok recur --log-level warn bench train "$CONFIGS/pendulum_novel_sac.yaml" --updates 2 \
    "${tiny[@]}"
  expect_text <<'END'
PendulumNoVel-v1: 2 envs, sac: 8 env steps per iteration after 8 of warm-up, 1 gradient updates per env step of 2 sequences x 5 steps \(zero state\), hidden 8, .*
policy: fresh .*
devices +mode +iters +env steps +env steps/s +grad upd/s .*
cpu/cpu +sync +2 +16 +[0-9]+ +[1-9][0-9]*\.[0-9] .*
END
  run_ok recur --log-level warn bench train "$CONFIGS/pendulum_novel_td3.yaml" --updates 1 \
    "${tiny[@]}" --set offpolicy.updates_per_step=0.5 --set offpolicy.stored_state=true \
    --set offpolicy.burn_in=2
  expect_text <<'END'
.*td3: 8 env steps per iteration after 8 of warm-up, 0.5 gradient updates per env step of 2 sequences x 2 \+ 5 steps \(stored state\).*
...
cpu/cpu +sync +1 +8 +[0-9]+ +[1-9][0-9]*\.[0-9] .*
END
  # From a trained run: its learner loads (the warm-up acts with its actor).
  recur --log-level warn train "$CONFIGS/pendulum_novel_sac.yaml" "${tiny[@]}" \
    --set run.total_env_steps=32 --set run.eval_every=0 --set run.stop_at_target=false \
    --set run.final_eval_episodes=1 --set "run.output_dir=$tmp" >/dev/null 2>&1
  run_ok recur --log-level warn bench train "$CONFIGS/pendulum_novel_sac.yaml" --updates 1 \
    "${tiny[@]}" --set "run.init_from=$(echo "$tmp"/pendulum_novel_sac-*)"
  expect_text 'policy: from .*pendulum_novel_sac-.*'
  run_status 2 recur bench train "$CONFIGS/pendulum_novel_sac.yaml" --modes sync,async
  expect_text '--modes async: algo.type = sac has no async mode .*; time it with --modes sync'
}

# A malformed pair fails before any training.
case_bench_train_bad_devices() {
  run_status 2 recur bench train "$CONFIGS/cartpole_novel.yaml" --devices gpu/cpu
  expect_text "--devices: 'gpu' in 'gpu/cpu' is not cpu, cuda or auto"
}

main "$@"
