#!/usr/bin/env python3
"""Env steps per second of vector envs from Python, in one run: recur.make_vec against
Gymnasium's SyncVectorEnv (and Gymnasium's own numpy-vectorized CartPole, and EnvPool when it is
installed). Random actions, drawn up front, the same for every contender; the timing covers
step() calls only (autoresets included), best of --repeats.

    python3 tools/bench/bench_vec.py [--env CartPole-v1] [--num-envs 16] [--steps 20000]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time


import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402

import recur  # noqa: E402


def timed(envs, actions: np.ndarray, repeats: int) -> float:
    """Best env-steps/s over `repeats` passes of `actions` (steps, num_envs)."""
    envs.reset(seed=0)
    for a in actions[:200]:  # warm-up
        envs.step(a)
    best = 0.0
    for _ in range(repeats):
        start = time.perf_counter()
        for a in actions:
            envs.step(a)
        elapsed = time.perf_counter() - start
        best = max(best, actions.size / elapsed)
    return best


def contenders(env_id: str, n: int):
    yield "recur.make_vec (copy=True)", lambda: recur.make_vec(env_id, n)
    yield "recur.make_vec (copy=False)", lambda: recur.make_vec(env_id, n, copy=False)
    yield "recur.make_vec (copy=False, 2 threads)", lambda: recur.make_vec(
        env_id, n, copy=False, num_threads=2
    )
    yield "gymnasium SyncVectorEnv", lambda: gym.make_vec(env_id, n, vectorization_mode="sync")
    if env_id == "CartPole-v1":
        yield "gymnasium CartPoleVectorEnv (numpy)", lambda: gym.make_vec(
            env_id, n, vectorization_mode="vector_entry_point"
        )
    try:
        import envpool  # noqa: F401
    except Exception as e:  # not installed, or built for another numpy
        print(f"envpool: not available ({type(e).__name__}: {e})")
    else:
        import envpool

        for threads in (1, 2):
            yield f"envpool {envpool.__version__} ({threads} thread{'s' * (threads > 1)})", (
                lambda t=threads: envpool.make_gymnasium(
                    env_id, num_envs=n, batch_size=n, num_threads=t, seed=0
                )
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="CartPole-v1")
    parser.add_argument("--num-envs", type=int, default=16)
    parser.add_argument("--steps", type=int, default=20000, help="vector steps per pass")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    rows = []
    for name, factory in contenders(args.env, args.num_envs):
        envs = factory()
        rng = np.random.default_rng(0)
        # EnvPool names the per-env space action_space; Gymnasium's vector envs single_action_space.
        space = getattr(envs, "single_action_space", None) or envs.action_space
        if isinstance(space, gym.spaces.Discrete):
            actions = rng.integers(0, space.n, size=(args.steps, args.num_envs))
        else:
            actions = rng.uniform(
                space.low, space.high, size=(args.steps, args.num_envs, *space.shape)
            ).astype(np.float32)
        rows.append((name, timed(envs, actions, args.repeats)))
        envs.close()

    base = dict(rows).get("gymnasium SyncVectorEnv")
    print(
        f"\n{args.env}, {args.num_envs} envs, random actions, {args.steps} vector steps x "
        f"best of {args.repeats}; Python {platform.python_version()}, numpy {np.__version__}, "
        f"gymnasium {gym.__version__}, recur {recur.__version__}\n"
    )
    print(f"| {'vector env':<42} | {'env steps/s':>12} | {'vs SyncVectorEnv':>16} |")
    print(f"|{'-' * 44}|{'-' * 14}|{'-' * 18}|")
    for name, rate in rows:
        ratio = f"{rate / base:.1f}x" if base else "-"
        print(f"| {name:<42} | {rate:>12,.0f} | {ratio:>16} |")


if __name__ == "__main__":
    main()
