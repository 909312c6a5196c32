"""POPGym's envs in Python (popgym 1.0.7) against recur's C++ ports, env steps/s on one core.

For every POPGym id at the chosen difficulties: the reference env stepped in a plain loop with
random actions drawn ahead of time (so the figure is the env's own cost, as POPGym's README
measures it) and reset on episode end; then `recur bench envs` on recur's id (popgym-<Name>-v0 ->
<Name>-v0), single env, single thread, in the same run. Prints a markdown table with the ratio.

    /tmp/recur-python-venv/bin/python tools/bench/popgym_speed.py [--recur build/tools/recur]
        [--difficulty Medium] [--seconds 2]

Needs popgym (and mazelib for the labyrinths) in the interpreter.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import time

import gymnasium as gym
import numpy as np
import popgym.envs

REPO = pathlib.Path(__file__).resolve().parents[2]


def python_steps_per_s(cls: type, seconds: float) -> float:
    env = cls()
    env.action_space.seed(0)
    actions = [env.action_space.sample() for _ in range(4096)]
    env.reset(seed=0)
    steps, start = 0, time.perf_counter()
    while True:
        for a in actions:
            _, _, terminated, truncated, _ = env.step(a)
            if terminated or truncated:
                env.reset()
        steps += len(actions)
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return steps / elapsed


def recur_steps_per_s(recur: str, env_id: str, steps: int) -> float:
    out = subprocess.run(
        [recur, "bench", "envs", "--env", env_id, "--steps", str(steps), "--repeats", "3", "--json"],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    ).stdout
    row = json.loads(out.strip().splitlines()[-1])
    return float(row["single_steps_per_s"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--recur", default=str(REPO / "build" / "tools" / "recur"))
    ap.add_argument("--difficulty", default="Medium", help="Easy, Medium, Hard or all")
    ap.add_argument("--seconds", type=float, default=2.0, help="Python timing per env")
    ap.add_argument("--steps", type=int, default=2_000_000, help="recur steps per repetition")
    args = ap.parse_args()
    gym.logger.min_level = 40  # POPGym's envs warn about float64 observations

    rows = []
    for cls, spec in popgym.envs.ALL.items():
        ref_id = spec["id"]
        # POPGym spells one id VelocityOnlyCartpole; recur uses the class name, ...CartPole.
        name = ref_id.removeprefix("popgym-").replace("Cartpole", "CartPole")
        if args.difficulty != "all" and args.difficulty not in name:
            continue
        py = python_steps_per_s(cls, args.seconds)
        cpp = recur_steps_per_s(args.recur, name, args.steps)
        rows.append((name, py, cpp))
        print(f"{name}: popgym {py:,.0f}/s, recur {cpp:,.0f}/s, {cpp / py:.0f}x", flush=True)

    print("\n| env | popgym (Python) steps/s | recur steps/s | recur / popgym |")
    print("|---|---:|---:|---:|")
    for name, py, cpp in rows:
        print(f"| {name} | {py:,.0f} | {cpp:,.0f} | {cpp / py:,.0f}x |")
    ratios = np.array([c / p for _, p, c in rows])
    print(f"\ngeometric mean ratio {np.exp(np.log(ratios).mean()):,.0f}x over {len(rows)} envs; "
          f"min {ratios.min():,.0f}x")


if __name__ == "__main__":
    main()
