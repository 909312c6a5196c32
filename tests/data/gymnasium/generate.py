#!/usr/bin/env python3
"""Writes the Gymnasium golden trajectories that tests/envs/gymnasium_parity_test.cc replays.

For every classic-control env, a few episodes (several seeds, random and scripted actions, env
options, episodes that end by termination and by truncation) are run in Gymnasium, recording the
internal state before and after each step (env.unwrapped.state), the action, the observation,
the reward and both flags. The C++ test puts the same state into recur's env, applies the same
action and compares. Output: tests/data/gymnasium/<env id>.txt (plain text, one step per line).

    pip install -r tools/requirements.txt
    python3 tests/data/gymnasium/generate.py [--out tests/data/gymnasium]
"""
import argparse
import math
import pathlib
import platform

import gymnasium as gym
import numpy as np


def fmt(values):
    return " ".join(repr(float(v)) for v in values)


def state_of(env):
    return [float(v) for v in np.asarray(env.unwrapped.state, dtype=np.float64).ravel()]


# Scripted policies get (obs, rng) and return a Gymnasium action.
def random_discrete(n):
    return lambda obs, rng: int(rng.integers(n))


def random_box(low, high):
    # Wider than the action space on purpose: Gymnasium clips, and so must recur.
    return lambda obs, rng: np.array([rng.uniform(low, high)], dtype=np.float32)


def cartpole_balance(obs, rng):
    return int(obs[2] + 0.5 * obs[3] > 0)


def car_energy(obs, rng):  # push in the direction of motion: reaches the flag
    return 2 if obs[1] >= 0 else 0


def car_left(obs, rng):
    return 0


def car_energy_continuous(obs, rng):
    return np.array([1.3 if obs[1] >= 0 else -1.3], dtype=np.float32)


def acrobot_pump(obs, rng):
    return 2 if obs[5] > 0 else 0


# (seed, policy, gym.make kwargs, reset options, recur options)
EPISODES = {
    "CartPole-v1": [
        (1, random_discrete(2), {}, None, {}),
        (2, random_discrete(2), {}, None, {}),
        (3, random_discrete(2), {"sutton_barto_reward": True}, None, {"sutton_barto_reward": "true"}),
        (4, cartpole_balance, {"max_episode_steps": 60}, None, {"max_episode_steps": "60"}),
        (5, random_discrete(2), {}, {"low": -0.2, "high": 0.2}, {"reset_low": "-0.2", "reset_high": "0.2"}),
    ],
    "Pendulum-v1": [
        (1, random_box(-3.0, 3.0), {}, None, {}),
        (2, random_box(-2.0, 2.0), {"g": 9.81, "max_episode_steps": 50},
         {"x_init": 1.0, "y_init": 0.5},
         {"g": "9.81", "max_episode_steps": "50", "x_init": "1.0", "y_init": "0.5"}),
    ],
    "MountainCar-v0": [
        (1, random_discrete(3), {}, None, {}),
        (2, car_left, {"max_episode_steps": 80}, None, {"max_episode_steps": "80"}),
        (3, car_energy, {}, None, {}),
        (4, car_energy, {"goal_velocity": 0.01}, None, {"goal_velocity": "0.01"}),
    ],
    "MountainCarContinuous-v0": [
        (1, random_box(-1.5, 1.5), {"max_episode_steps": 150}, None, {"max_episode_steps": "150"}),
        (2, car_energy_continuous, {}, None, {}),
        (3, lambda obs, rng: np.array([-0.7], dtype=np.float32), {"max_episode_steps": 90},
         {"low": -0.9, "high": -0.8}, {"max_episode_steps": "90", "reset_low": "-0.9", "reset_high": "-0.8"}),
    ],
    "Acrobot-v1": [
        (1, random_discrete(3), {"max_episode_steps": 120}, None, {"max_episode_steps": "120"}),
        (2, acrobot_pump, {}, None, {}),
        (3, random_discrete(3), {"max_episode_steps": 60}, {"low": -0.5, "high": 0.5},
         {"max_episode_steps": "60", "reset_low": "-0.5", "reset_high": "0.5"}),
    ],
}


def write_env(env_id, out_dir):
    lines = [
        f"# Gymnasium {gym.__version__}, numpy {np.__version__}, Python {platform.python_version()}; "
        "written by tests/data/gymnasium/generate.py",
        "# episode <n> options <key=value,...|->",
        "# reset <state> | <obs>",
        "# step <action> | <state before> | <state after> | <obs> | <reward> <terminated> <truncated>",
    ]
    counts = {"terminated": 0, "truncated": 0, "steps": 0}
    for n, (seed, policy, kwargs, reset_options, recur_options) in enumerate(EPISODES[env_id]):
        env = gym.make(env_id, **kwargs)
        rng = np.random.default_rng(1000 + seed)
        obs, _ = env.reset(seed=seed, options=reset_options)
        opts = ",".join(f"{k}={v}" for k, v in recur_options.items()) or "-"
        lines.append(f"episode {n} options {opts}")
        lines.append(f"reset {fmt(state_of(env))} | {fmt(obs)}")
        while True:
            action = policy(obs, rng)
            before = state_of(env)
            obs, reward, terminated, truncated, _ = env.step(action)
            a = np.atleast_1d(np.asarray(action, dtype=np.float32))
            lines.append(
                f"step {fmt(a)} | {fmt(before)} | {fmt(state_of(env))} | {fmt(obs)} | "
                f"{repr(float(reward))} {int(terminated)} {int(truncated)}"
            )
            counts["steps"] += 1
            if terminated or truncated:
                counts["terminated"] += int(terminated)
                counts["truncated"] += int(truncated)
                break
    path = out_dir / f"{env_id}.txt"
    path.write_text("\n".join(lines) + "\n")
    print(f"{path}: {len(EPISODES[env_id])} episodes, {counts['steps']} steps, "
          f"{counts['terminated']} terminated, {counts['truncated']} truncated")
    return counts


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(pathlib.Path(__file__).resolve().parent))
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for env_id in EPISODES:
        write_env(env_id, out)


if __name__ == "__main__":
    main()
