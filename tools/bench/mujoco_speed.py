"""recur's MuJoCo envs against the physics alone and against Gymnasium's Python envs, env steps/s
on one core, all on the same library (mujoco 3.3.7).

For each id, side by side in one run:
  gymnasium  gymnasium.make(id) stepped in a Python loop with actions drawn ahead of time, reset
             when an episode ends; its mean episode length is passed on to the bare loop
  bare       tools/bench/mujoco_bare_step.c, compiled here against the wheel's libmujoco: frame_skip
             mj_step calls per env step with random controls, mj_resetData after the random
             policy's mean episode length, nothing else: the physical limit
  recur      `recur bench envs --env ID` (single env, single thread, random actions, resets)

    /tmp/recur-python-venv/bin/python tools/bench/mujoco_speed.py [--recur build/tools/recur]
        [--ids HalfCheetah-v5 Hopper-v5 ...] [--seconds 2]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import tempfile
import time

import gymnasium as gym
import mujoco
import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[2]
IDS = ["HalfCheetah-v5", "Hopper-v5", "Walker2d-v5", "Ant-v5", "Swimmer-v5",
       "InvertedPendulum-v5", "InvertedDoublePendulum-v5", "Reacher-v5", "Humanoid-v5"]


def build_bare() -> str:
    """Compiles mujoco_bare_step.c against the Python package's libmujoco (the same build)."""
    pkg = pathlib.Path(mujoco.__file__).parent
    lib = next(pkg.glob("libmujoco.so.*"))
    exe = pathlib.Path(tempfile.gettempdir()) / "recur_mujoco_bare_step"
    subprocess.run(["cc", "-O2", "-o", str(exe), str(REPO / "tools/bench/mujoco_bare_step.c"),
                    f"-I{pkg / 'include'}", str(lib), f"-Wl,-rpath,{pkg}"], check=True)
    return str(exe)


def bare_steps_per_s(exe: str, env: gym.Env, seconds: float, reset_every: int) -> float:
    u = env.unwrapped
    out = subprocess.run([exe, u.fullpath, str(u.frame_skip), str(seconds), str(reset_every)],
                         check=True, capture_output=True, text=True).stdout
    return float(out)


def gym_steps_per_s(env: gym.Env, seconds: float) -> tuple[float, int]:
    """Steps/s, and the mean length of the episodes that ended (random actions)."""
    env.action_space.seed(0)
    actions = [env.action_space.sample() for _ in range(1000)]
    env.reset(seed=0)
    total, episodes, start = 0, 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for a in actions:
            _, _, terminated, truncated, _ = env.step(a)
            if terminated or truncated:
                env.reset()
                episodes += 1
        total += len(actions)
    return total / (time.perf_counter() - start), max(1, total // max(1, episodes))


def recur_steps_per_s(recur: str, env_id: str, steps: int) -> float:
    out = subprocess.run(
        [recur, "bench", "envs", "--env", env_id, "--steps", str(steps), "--repeats", "3", "--json"],
        check=True, capture_output=True, text=True).stdout
    return float(json.loads(out.strip().splitlines()[-1])["single_steps_per_s"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--recur", default=str(REPO / "build" / "tools" / "recur"))
    ap.add_argument("--ids", nargs="+", default=IDS)
    ap.add_argument("--seconds", type=float, default=2.0)
    args = ap.parse_args()
    print(f"mujoco {mujoco.__version__}, gymnasium {gym.__version__}")
    exe = build_bare()
    # bare / Gymnasium is the most any env on this library could gain over Gymnasium's: where
    # the physics is most of a Python step, 2x is out of reach for anyone.
    print("| env | episode length (random) | bare mj_step loop | Gymnasium (Python) | recur | "
          "recur / bare | recur / Gymnasium | bare / Gymnasium |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for env_id in args.ids:
        env = gym.make(env_id)
        py, length = gym_steps_per_s(env, args.seconds)
        bare = bare_steps_per_s(exe, env, args.seconds, length)
        cpp = recur_steps_per_s(args.recur, env_id, max(20000, int(bare * args.seconds)))
        print(f"| {env_id} | {length} | {bare:,.0f} | {py:,.0f} | {cpp:,.0f} | {cpp / bare:.0%} | "
              f"{cpp / py:.1f}x | {bare / py:.1f}x |", flush=True)


if __name__ == "__main__":
    main()
