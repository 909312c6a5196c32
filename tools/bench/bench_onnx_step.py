#!/usr/bin/env python3
"""One deterministic actor step of a recur policy, three ways side by side in one run, on the CPU
(one thread each), for docs/PERFORMANCE.md ("ONNX export"):

  onnxruntime   the exported model (recur.Policy.export_onnx) in an InferenceSession: obs,
                episode_start and the state in, actions, logits, value and next state out
  recur         recur.Policy.act: recur's C++ PolicyActor through the Python binding (state in
                and out as one array, as the ONNX model takes it)
  torch         the same network in PyTorch: normalization, nn.LSTMCell actor and critic cores
                with the episode-start mask, linear heads, argmax (torch.no_grad)

All three are called from Python with numpy arrays and return numpy arrays, so each row includes
its binding's cost. The policy is CartPoleNoVel's (obs 4, LSTM 64, separate critic core, linear
heads) after a 512-step run: weights do not change the speed. Timing: warm-up, then calls repeated
until --min-seconds / 3 have passed, the median of 3 such chunks.

    PYTHONPATH=build-py/tools/python python3 tools/bench/bench_onnx_step.py [--batch 1,64]

PyTorch is optional (the row is skipped without it); CI does not install it.
"""
import argparse
import pathlib
import statistics
import tempfile
import time

import numpy as np

import recur

REPO = pathlib.Path(__file__).resolve().parents[2]


def timed(fn, min_seconds):
    for _ in range(50):
        fn()
    chunks = []
    for _ in range(3):
        calls, start = 0, time.perf_counter()
        while time.perf_counter() - start < min_seconds / 3:
            fn()
            calls += 1
        chunks.append((time.perf_counter() - start) / calls)
    return statistics.median(chunks) * 1e6


def onnx_step(path, policy, B):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    feeds = {"obs": rng.normal(size=(B, policy.obs_dim)).astype(np.float32),
             "episode_start": np.zeros(B, np.float32)}
    for i in sess.get_inputs():
        if i.name.endswith("_in"):
            feeds[i.name] = np.zeros((i.shape[0], B, i.shape[2]), np.float32)
    return lambda: sess.run(None, feeds)


def recur_step(policy, B):
    rng = np.random.default_rng(0)
    obs = rng.normal(size=(B, policy.obs_dim)).astype(np.float32)
    state = policy.initial_state(B)
    starts = np.zeros(B, bool)
    return lambda: policy.act(obs, state, starts, deterministic=True, return_info=True)


def torch_step(policy, B):
    import torch

    torch.set_num_threads(1)
    obs_dim, H = policy.obs_dim, int(policy.spec["core.hidden"])
    actor, critic = torch.nn.LSTMCell(obs_dim, H), torch.nn.LSTMCell(obs_dim, H)
    pi, vf = torch.nn.Linear(H, policy.action_dim), torch.nn.Linear(H, 1)
    mean, std = torch.zeros(obs_dim), torch.ones(obs_dim)
    rng = np.random.default_rng(0)
    obs = rng.normal(size=(B, obs_dim)).astype(np.float32)
    starts = np.zeros(B, np.float32)
    state = [np.zeros((B, H), np.float32) for _ in range(4)]

    @torch.no_grad()
    def step():
        x = ((torch.from_numpy(obs) - mean) / std).clamp(-10, 10)
        keep = 1 - torch.from_numpy(starts)[:, None]
        h, c, ch, cc = (torch.from_numpy(s) * keep for s in state)
        h, c = actor(x, (h, c))
        ch, cc = critic(x, (ch, cc))
        logits = pi(h)
        return (logits.argmax(1).numpy(), logits.numpy(), vf(ch)[:, 0].numpy(), h.numpy(),
                c.numpy(), ch.numpy(), cc.numpy())

    return step


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", default="1,64", help="comma-separated batch sizes")
    ap.add_argument("--min-seconds", type=float, default=1.5)
    ap.add_argument("--run", help="a run directory or checkpoint (default: a 512-step run)")
    args = ap.parse_args()
    recur.set_log_level("warn")
    with tempfile.TemporaryDirectory() as tmp:
        run = args.run or recur.train(
            REPO / "configs" / "cartpole_novel.yaml", {"run.output_dir": tmp},
            run__total_env_steps=512, run__eval_every=0, run__final_eval_episodes=1)
        policy = recur.Policy.load(run, seed=0)
        path = policy.export_onnx(pathlib.Path(tmp) / "policy.onnx")
        try:
            import torch  # noqa: F401
            have_torch = True
        except ImportError:
            have_torch = False
        print(f"{'step':<12} {'B':>4} {'us/call':>10} {'env steps/s':>12}")
        for B in (int(b) for b in args.batch.split(",")):
            rows = [("onnxruntime", onnx_step(path, policy, B)), ("recur", recur_step(policy, B))]
            if have_torch:
                rows.append(("torch", torch_step(policy, B)))
            for name, fn in rows:
                us = timed(fn, args.min_seconds)
                print(f"{name:<12} {B:>4} {us:>10.1f} {B / us * 1e6:>12.0f}", flush=True)
        if not have_torch:
            print("(torch row skipped: PyTorch is not installed)")


if __name__ == "__main__":
    main()
