#!/usr/bin/env python3
"""Box2D env stepping speed of the Python references, for docs/PERFORMANCE.md ("Box2D envs"):
Gymnasium (one env) and EnvPool (1 env, 16 envs on 1 and 2 threads, sync mode), random actions,
resets included, on the same machine as `recur bench envs`.

    pip install -r tools/requirements.txt      # gymnasium[box2d], envpool
    python3 tools/bench/bench_box2d_python.py
"""
import time

import gymnasium as gym
import numpy as np

IDS = ["LunarLander-v3", "LunarLanderContinuous-v3", "BipedalWalker-v3", "BipedalWalkerHardcore-v3"]


def gymnasium_speed(env_id, steps=20000):
    env = gym.make(env_id)
    env.reset(seed=0)
    env.action_space.seed(0)
    actions = [env.action_space.sample() for _ in range(1000)]
    start = time.perf_counter()
    for i in range(steps):
        _, _, terminated, truncated, _ = env.step(actions[i % 1000])
        if terminated or truncated:
            env.reset()
    return steps / (time.perf_counter() - start)


def envpool_speed(envpool, env_id, num_envs, threads):
    env = envpool.make_gymnasium(env_id, num_envs=num_envs, batch_size=num_envs,
                                 num_threads=threads, seed=0)
    env.reset()
    rng = np.random.default_rng(0)
    space = env.action_space
    if hasattr(space, "n"):
        actions = rng.integers(0, space.n, size=(64, num_envs))
    else:
        actions = rng.uniform(-1, 1, size=(64, num_envs) + space.shape).astype(np.float32)
    calls = (200000 if num_envs > 1 else 100000) // num_envs  # EnvPool autoresets itself
    start = time.perf_counter()
    for i in range(calls):
        env.step(actions[i % 64])
    return calls * num_envs / (time.perf_counter() - start)


def main():
    for env_id in IDS:
        print(f"gymnasium {gym.__version__} {env_id:26s} 1 env: "
              f"{gymnasium_speed(env_id) / 1e3:8.1f} k steps/s", flush=True)
    try:
        import envpool
    except ImportError:
        print("envpool is not installed (pip install envpool): EnvPool rows skipped")
        return
    for env_id in IDS:
        for num_envs, threads in [(1, 1), (16, 1), (16, 2)]:
            speed = envpool_speed(envpool, env_id, num_envs, threads)
            print(f"envpool {envpool.__version__} {env_id:26s} envs {num_envs:2d} threads "
                  f"{threads}: {speed / 1e3:8.1f} k steps/s", flush=True)


if __name__ == "__main__":
    main()
