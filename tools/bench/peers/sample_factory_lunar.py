#!/usr/bin/env python3
"""Sample Factory 2.1.1 (APPO with an LSTM core) on Gymnasium's LunarLander-v3: the high-throughput
recurrent trainer that issue 36 sets beside recur, on the same env, policy size, horizon and batch,
on the same GPU. A benchmark, not a test.

The env is Gymnasium's (Box2D), registered through SF's env registry (`register_env`); SF steps
it in --workers rollout processes of --envs-per-worker envs each (double-buffered: SF's
worker_num_splits 2, half a worker's envs step while the policy acts on the other half).
Shapes (--preset; flags given after it override):
  gpu   configs/lunar_lander_gpu.yaml: 1024 envs, rollout 32 = recurrence 32 (BPTT over the whole
        rollout), encoder none (SF's encoder_mlp_layers []), LSTM-256, separate actor and critic
        (actor_critic_share_weights False: SF copies encoder and core), heads [64]
        (decoder_mlp_layers), relu, 4 epochs of 4 minibatches of 8192 samples (256 sequences),
        lr 1e-3 constant, gamma .999, lambda .98, clip .2, entropy .01, grad clip .5.
  fast  GPU_SCALE.md section 4's throughput shape: encoder [128], one shared LSTM-128, linear
        heads, 1 epoch; 4096 envs.
  cpu   a smoke shape for a 2-core machine: 2 workers x 8 envs, encoder [64], shared LSTM-64.
Kept from SF's APPO (where recur differs): asynchronous sampling and learning (policy lag; --sync
for async_rl False), SF's return normalization (normalize_returns) instead of recur's reward
scaling, V-trace off (GAE as recur), value_bootstrap on (time limits bootstrapped as recur does),
observations normalized (normalize_input). TF32: --tf32 off|on sets cuBLAS and cuDNN in every SF
process (spawned children re-import this file, which applies PEER_TF32 at import).

Figures, and how: SF's runner calls the handler this script registers
(`register_episodic_stats_handler`) with every finished episode's raw return ("reward", before
reward_scale) and its learner's env-step count (`runner.env_steps`). The clock starts at SF's
on_start (the worker processes launched; envs and the model are built after it), and again at
the first learner report (`first_learn_s`), so both 'with start-up' and 'after the first update'
times are given. Time to target: when the mean of the last --target-window episode returns first
reaches --target (200), wall seconds and env steps; --stop-at-target stops SF there, and
--max-seconds after that long (SF 2.1.1's train_for_seconds never fires). env steps/s = the
learner's env steps at its last training step / the wall time to it; steady = the same from the
first training step (start-up and the first batch excluded). SF's own report
(every 5 s: "Fps is (10 sec ...)", "Avg episode reward") is printed as usual; its averaged timing
stats (runner.avg_stats) go into the result as sf_timing. Last line `RESULT {json}`, the fields
of tools/bench/peers/cleanrl_lstm_ppo.py where they mean the same.

Dependencies: sample-factory 2.1.1 pins numpy<2 and gymnasium<1, but LunarLander-v3 exists only in
Gymnasium >= 1.0; SF is installed with --no-deps and runs on numpy 2 / Gymnasium 1.2.2 (checked on
CPU: this script end to end). Two SF 2.1.1 bugs are patched at import (in every SF process):
a NumPy >= 2.3 failure writing policy outputs (patch_sf_for_numpy2) and separate actor/critic
LSTMs failing in the learner (patch_sf_separate_rnn); each says why beside its code. Needed beside torch: sample-factory, signal-slot-mp, faster-fifo,
colorlog, tensorboardX, gymnasium, farama-notifications, box2d, opencv(-headless), psutil,
threadpoolctl, filelock (tools/gpu/peers_wheels.sh).

Run (CPU, here):  python3 tools/bench/peers/sample_factory_lunar.py --preset cpu --device cpu \\
                      --total-steps 100000
Device:           python3 tools/bench/peers/sample_factory_lunar.py --preset gpu --workers 16 \\
                      --stop-at-target --tf32 off
"""
import argparse
import json
import math
import os
import shutil
import sys
import tempfile
import time
from collections import deque

TF32 = os.environ.get("PEER_TF32", "off") == "on"
try:  # runs in SF's spawned processes too: they import this file as __mp_main__
    import torch

    torch.backends.cuda.matmul.allow_tf32 = TF32
    torch.backends.cudnn.allow_tf32 = TF32  # torch's default is True: off must be said
except ImportError:
    torch = None


def patch_sf_for_numpy2():
    """SF 2.1.1 writes a policy output of shape (1,) into a scalar slot of its numpy trajectory
    buffers (TensorDict._set_data_func: `x[index] = n`). NumPy < 2.3 converted a size-1 array to a
    scalar there (deprecated since 1.25); later NumPy raises "setting an array element with a
    sequence", killing every rollout worker. The device image has NumPy 2.5 and SF pins < 2, so
    instead of carrying an old NumPy the write is reshaped to the slot's shape, as NumPy did."""
    try:
        import numpy as np
        from sample_factory.algo.utils import tensor_dict as td
    except ImportError:
        return
    if getattr(td.TensorDict, "_peer_patched", False):
        return
    original = td.TensorDict._set_data_func

    def set_data(self, x, index, new_data):
        if isinstance(x, np.ndarray) and isinstance(new_data, (np.ndarray, torch.Tensor)):
            n = new_data.cpu().numpy() if torch.is_tensor(new_data) else new_data
            shape = np.shape(x[index])
            if n.shape != shape and n.size == math.prod(shape):
                n = n.reshape(shape)
            x[index] = n
            return
        original(self, x, index, new_data)

    td.TensorDict._set_data_func = set_data
    td.TensorDict._peer_patched = True


def patch_sf_separate_rnn():
    """SF 2.1.1's ActorCriticSeparateWeights._core_rnn splits its input with `.chunk`, which the
    learner's input, a PackedSequence (whole sequences for BPTT), does not have: with
    actor_critic_share_weights False and use_rnn True every learner step raises AttributeError.
    Here the packed data is split the same way (actor's encoder output first, critic's second),
    each core runs on its own PackedSequence with the same batch sizes and indices, and the
    outputs are joined again, which is what the tensor branch does per step."""
    try:
        from sample_factory.model import actor_critic as ac
    except ImportError:
        return
    if getattr(ac.ActorCriticSeparateWeights, "_peer_patched", False):
        return
    original = ac.ActorCriticSeparateWeights._core_rnn

    def core_rnn(self, head_output, rnn_states):
        if torch.is_tensor(head_output):
            return original(self, head_output, rnn_states)
        n = len(self.cores)
        outputs, new_states = [], []
        for core, data, state in zip(self.cores, head_output.data.chunk(n, dim=1),
                                     rnn_states.chunk(n, dim=1)):
            out, new_state = core(head_output._replace(data=data), state)
            outputs.append(out.data)
            new_states.append(new_state)
        return head_output._replace(data=torch.cat(outputs, dim=1)), torch.cat(new_states, dim=1)

    ac.ActorCriticSeparateWeights._core_rnn = core_rnn
    ac.ActorCriticSeparateWeights._peer_patched = True


patch_sf_for_numpy2()  # at import: SF's spawned processes import this file too
patch_sf_separate_rnn()


def stub_pygame():
    """Gymnasium's box2d package imports pygame (CarRacing's renderer) even for LunarLander, which
    needs it only to render: without pygame an empty module stands in (as in cleanrl_lstm_ppo)."""
    try:
        import pygame  # noqa: F401
    except ImportError:
        import types
        stub = types.ModuleType("pygame")
        stub.gfxdraw = types.ModuleType("pygame.gfxdraw")
        sys.modules.setdefault("pygame", stub)
        sys.modules.setdefault("pygame.gfxdraw", stub.gfxdraw)


def make_env(full_env_name, cfg=None, env_config=None, render_mode=None):
    stub_pygame()
    import gymnasium as gym
    return gym.make(full_env_name, render_mode=render_mode)


PRESETS = {
    "gpu": dict(num_envs=1024, rollout=32, encoder="", hidden=256, shared_core=False, head="64",
                activation="relu", epochs=4, minibatches=4, lr=1e-3, gamma=0.999,
                gae_lambda=0.98, ent_coef=0.01, workers=16),
    "fast": dict(num_envs=4096, rollout=32, encoder="128", hidden=128, shared_core=True, head="",
                 activation="relu", epochs=1, minibatches=4, lr=1e-3, gamma=0.999,
                 gae_lambda=0.98, ent_coef=0.01, workers=16),
    "cpu": dict(num_envs=16, rollout=32, encoder="64", hidden=64, shared_core=True, head="",
                activation="tanh", epochs=4, minibatches=4, lr=1e-3, gamma=0.99,
                gae_lambda=0.95, ent_coef=0.01, workers=2),
}


def widths(text):
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated widths like 64,64 or '', got '{text}'")
    if any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"widths must be >= 1, got '{text}'")
    return values


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--preset", choices=sorted(PRESETS), default="gpu")
    p.add_argument("--env", default="LunarLander-v3")
    p.add_argument("--num-envs", type=int, help="total envs = workers x envs per worker")
    p.add_argument("--workers", type=int, help="SF rollout worker processes")
    p.add_argument("--policy-workers", type=int, default=1, help="SF inference workers per policy")
    p.add_argument("--rollout", type=int)
    p.add_argument("--encoder", type=widths)
    p.add_argument("--hidden", type=int)
    p.add_argument("--shared-core", action=argparse.BooleanOptionalAction, default=None)
    p.add_argument("--head", type=widths)
    p.add_argument("--activation", choices=["tanh", "relu", "elu"])
    p.add_argument("--epochs", type=int)
    p.add_argument("--minibatches", type=int)
    p.add_argument("--lr", type=float)
    p.add_argument("--gamma", type=float)
    p.add_argument("--gae-lambda", type=float)
    p.add_argument("--ent-coef", type=float)
    p.add_argument("--sync", action="store_true", help="async_rl False (sampling waits for learning)")
    p.add_argument("--total-steps", type=int, default=10_000_000)
    p.add_argument("--target", type=float, default=200.0)
    p.add_argument("--target-window", type=int, default=100)
    p.add_argument("--stop-at-target", action="store_true")
    p.add_argument("--max-seconds", type=float, default=math.inf,
                   help="stop SF after this long from its start (SF 2.1.1's own train_for_seconds "
                        "never fires: its runner never advances total_train_seconds)")
    p.add_argument("--device", choices=["gpu", "cuda", "cpu"], default="gpu")
    p.add_argument("--tf32", choices=["on", "off"], default="off")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--train-dir", help="SF's experiment folder (default: a temporary one, removed)")
    p.add_argument("sf_args", nargs="*", help="after --: more SF flags, e.g. -- --batched_sampling=True")
    args = p.parse_args(argv)
    for key, value in PRESETS[args.preset].items():
        if getattr(args, key) is None:
            setattr(args, key, widths(value) if key in ("encoder", "head") else value)
    if args.num_envs % (2 * args.workers):
        p.error(f"--num-envs {args.num_envs} must be a multiple of 2 x --workers {args.workers} "
                "(SF's worker_num_splits 2 halves each worker's envs)")
    if args.num_envs % args.minibatches:
        p.error(f"--num-envs {args.num_envs} must be divisible by --minibatches {args.minibatches}")
    return args


def sf_argv(args, train_dir):
    samples = args.num_envs * args.rollout
    argv = [
        f"--env={args.env}", "--algo=APPO", f"--experiment=sf_{args.preset}", f"--train_dir={train_dir}",
        f"--device={'cpu' if args.device == 'cpu' else 'gpu'}", f"--seed={args.seed}",
        f"--num_workers={args.workers}", f"--num_envs_per_worker={args.num_envs // args.workers}",
        "--worker_num_splits=2", f"--policy_workers_per_policy={args.policy_workers}",
        f"--rollout={args.rollout}", f"--recurrence={args.rollout}",
        f"--batch_size={samples // args.minibatches}", f"--num_batches_per_epoch={args.minibatches}",
        f"--num_epochs={args.epochs}", "--use_rnn=True", "--rnn_type=lstm",
        f"--rnn_size={args.hidden}", "--rnn_num_layers=1",
        f"--actor_critic_share_weights={args.shared_core}", f"--nonlinearity={args.activation}",
        f"--learning_rate={args.lr}", "--lr_schedule=constant", f"--gamma={args.gamma}",
        f"--gae_lambda={args.gae_lambda}", f"--exploration_loss_coeff={args.ent_coef}",
        "--value_loss_coeff=0.5", "--ppo_clip_ratio=0.2", "--max_grad_norm=0.5", "--adam_eps=1e-5",
        "--with_vtrace=False", "--value_bootstrap=True", "--normalize_input=True",
        "--normalize_returns=True", f"--async_rl={not args.sync}",
        f"--train_for_env_steps={args.total_steps}",
        f"--stats_avg={args.target_window}",
        "--save_every_sec=100000", "--save_best_every_sec=100000", "--restart_behavior=overwrite",
        "--experiment_summaries_interval=100000", "--decorrelate_envs_on_one_worker=True",
    ]
    argv.append("--encoder_mlp_layers" + "".join(f" {w}" for w in args.encoder)
                if args.encoder else "--encoder_mlp_layers")
    argv.append("--decoder_mlp_layers" + "".join(f" {w}" for w in args.head)
                if args.head else "--decoder_mlp_layers")
    # nargs="*" options: split "--x 1 2" into separate words; an empty list is the bare flag.
    out = []
    for a in argv + list(args.sf_args):
        out.extend(a.split(" ") if a.startswith(("--encoder_mlp_layers", "--decoder_mlp_layers")) else [a])
    return out


def main(argv=None):
    args = parse_args(argv)
    os.environ["PEER_TF32"] = args.tf32  # for SF's spawned processes (see the top of this file)
    torch.backends.cuda.matmul.allow_tf32 = args.tf32 == "on"
    torch.backends.cudnn.allow_tf32 = args.tf32 == "on"
    stub_pygame()
    from sample_factory.algo.runners.runner import AlgoObserver
    from sample_factory.algo.utils.misc import ExperimentStatus
    from sample_factory.cfg.arguments import parse_full_cfg, parse_sf_args
    from sample_factory.envs.env_utils import register_env
    from sample_factory.train import make_runner

    register_env(args.env, make_env)
    train_dir = args.train_dir or tempfile.mkdtemp(prefix="sf-peer-")
    argv_sf = sf_argv(args, train_dir)
    print("sample_factory_lunar: SF flags: " + " ".join(argv_sf), flush=True)
    parser, _ = parse_sf_args(argv=argv_sf)
    cfg = parse_full_cfg(parser, argv_sf)
    cfg, runner = make_runner(cfg)

    recent = deque(maxlen=args.target_window)
    clock = dict(start=None, first_learn=None, first_learn_steps=0, hit=None, episodes=0,
                 timed_out=False, last_learn=None, last_steps=0)

    def total_steps(r):
        return sum(r.env_steps.values())

    def on_episode(r, msg, policy_id):
        ep = msg.get("episodic", msg)
        reward = ep.get("reward") if isinstance(ep, dict) else None
        if reward is None:
            return
        values = reward.tolist() if hasattr(reward, "tolist") else reward
        values = values if isinstance(values, list) else [values]
        recent.extend(float(v) for v in values)
        clock["episodes"] += len(values)
        if clock["hit"] is None and len(recent) == args.target_window and \
                sum(recent) / len(recent) >= args.target:
            now, steps = time.perf_counter(), total_steps(r)
            clock["hit"] = (now - clock["start"], steps, sum(recent) / len(recent),
                            now - clock["first_learn"] if clock["first_learn"] else None)
            print(f"TARGET mean return {clock['hit'][2]:.1f} over the last {args.target_window} "
                  f"episodes >= {args.target} at {steps} env steps, {clock['hit'][0]:.2f} s after "
                  "SF's start", flush=True)
            if args.stop_at_target:
                r._stop_training()

    class Clock(AlgoObserver):
        def on_start(self, r):
            clock["start"] = time.perf_counter()

        def on_training_step(self, r, iteration):
            now = time.perf_counter()
            if clock["first_learn"] is None and total_steps(r) > 0:
                clock["first_learn"] = now
                clock["first_learn_steps"] = total_steps(r)
            clock["last_learn"], clock["last_steps"] = now, total_steps(r)
            if now - clock["start"] > args.max_seconds and not clock["timed_out"]:
                clock["timed_out"] = True
                print(f"sample_factory_lunar: --max-seconds {args.max_seconds:g} reached", flush=True)
                r._stop_training()

    runner.register_observer(Clock())
    runner.register_episodic_stats_handler(on_episode)
    status = runner.init()
    if status == ExperimentStatus.SUCCESS:
        status = runner.run()
    # The learner's env-step count moves at training steps: throughput is timed to the last one.
    end = clock["last_learn"] or time.perf_counter()
    steps = clock["last_steps"]
    wall = end - (clock["start"] or end)
    steady = None
    if clock["first_learn"] and steps > clock["first_learn_steps"]:
        steady = (steps - clock["first_learn_steps"]) / (end - clock["first_learn"])
    hit = clock["hit"]
    timing = {k: round(sum(v) / len(v), 5) for k, v in runner.avg_stats.items() if len(v)}
    result = dict(
        peer="sample_factory", version=_sf_version(), env=args.env, preset=args.preset,
        num_envs=args.num_envs, workers=args.workers, rollout=args.rollout, encoder=args.encoder,
        hidden=args.hidden, shared_core=args.shared_core, head=args.head, epochs=args.epochs,
        minibatches=args.minibatches, async_rl=not args.sync, device=args.device, tf32=args.tf32,
        torch=torch.__version__, seed=args.seed, status=int(status), timed_out=clock["timed_out"],
        env_steps=steps,
        wall_s=round(wall, 3), env_steps_per_s=round(steps / wall, 1) if wall > 0 else None,
        env_steps_per_s_steady=round(steady, 1) if steady else None,
        first_learn_s=round(clock["first_learn"] - clock["start"], 3) if clock["first_learn"] else None,
        episodes=clock["episodes"],
        last_mean_return=round(sum(recent) / len(recent), 2) if recent else None,
        target=args.target, target_window=args.target_window,
        time_to_target_s=round(hit[0], 3) if hit else None,
        time_to_target_after_first_learn_s=round(hit[3], 3) if hit and hit[3] else None,
        steps_to_target=hit[1] if hit else None, sf_timing=timing)
    print("RESULT " + json.dumps(result), flush=True)
    if not args.train_dir:
        shutil.rmtree(train_dir, ignore_errors=True)
    return 0 if status == ExperimentStatus.SUCCESS else 1


def _sf_version():
    try:
        from importlib.metadata import version
        return version("sample-factory")
    except Exception:  # noqa: BLE001 -- only a label in the result
        return None


if __name__ == "__main__":
    sys.exit(main())
