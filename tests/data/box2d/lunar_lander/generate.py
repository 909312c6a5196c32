#!/usr/bin/env python3
"""Writes the Gymnasium golden data that tests/envs/box2d/lunar_lander_*_test.cc read.

recur's LunarLander runs on Box2D 2.4.1, Gymnasium's on pybox2d's Box2D 2.3, so trajectories
cannot match bit for bit (docs/BOX2D.md, "Why not bit for bit"). The data therefore feeds three layers of
tests:

  trajectories.txt  episodes with every RNG draw Gymnasium made (terrain heights, initial force,
                    wind indices, the two dispersions of every step) and, per step, the action, the
                    lander's body state as Box2D reports it (position, velocity, angle, angular
                    velocity, leg contacts, awake, game_over), the observation, the reward, the
                    flags and prev_shaping. Exact tests recompute terrain, observation, shaping and
                    reward from these; short-horizon tests replay the draws in recur's physics.
  heuristic.txt     Gymnasium's heuristic controller over many fresh-seed episodes: mean, std, n.

The draws are captured by giving the env a recording proxy around its numpy Generator (the same
stream: the proxy forwards every call and logs the values).

    /tmp/b2venv/bin/python tests/data/box2d/lunar_lander/generate.py [--out tests/data/box2d/lunar_lander]
        [--heuristic-episodes 1000]
"""
import argparse
import math
import pathlib
import platform
from importlib import metadata

import gymnasium as gym
import numpy as np
from gymnasium.envs.box2d.lunar_lander import heuristic


def fmt(values):
    return " ".join(repr(float(v)) for v in values)


class RecordingRng:
    """Forwards to a numpy Generator and logs (method, values) of every draw."""

    def __init__(self, rng):
        self.rng = rng
        self.log = []

    def uniform(self, *args, **kwargs):
        v = self.rng.uniform(*args, **kwargs)
        self.log.append(("uniform", np.atleast_1d(v).tolist()))
        return v

    def integers(self, *args, **kwargs):
        v = self.rng.integers(*args, **kwargs)
        self.log.append(("integers", np.atleast_1d(v).tolist()))
        return v

    def take(self):
        out, self.log = self.log, []
        return out


def header(out):
    out.write(f"# gymnasium {gym.__version__}, box2d {metadata.version('box2d')}, "
              f"numpy {np.__version__}, python {platform.python_version()} "
              f"({platform.machine()})\n")


def body_line(u):
    lander = u.lander
    p, v = lander.position, lander.linearVelocity
    return fmt([p.x, p.y, v.x, v.y, lander.angle, lander.angularVelocity,
                u.legs[0].ground_contact, u.legs[1].ground_contact, lander.awake, u.game_over])


def edge_vertices(u):
    # The moon's edge fixtures as Box2D stores them (float32), in creation order.
    vals = []
    for f in u.moon.fixtures:
        for v in f.shape.vertices:
            vals += [v[0], v[1]]
    return vals


# Fixed action sequences for the short-horizon replays (cycled); every engine combination and,
# for the continuous env, values outside [-1, 1] (Gymnasium clips) and below the thresholds.
DISCRETE_CYCLE = [2, 2, 1, 2, 3, 0, 2, 1, 1, 2, 3, 3, 2, 0, 2, 2, 1, 3, 2, 2]
CONTINUOUS_CYCLE = [[1.5, 0.0], [0.3, -0.8], [-0.5, 0.7], [0.9, 1.3], [0.0, -0.4],
                    [0.6, -1.2], [1.0, 0.55], [-2.0, 0.0], [0.2, -0.6], [0.8, 0.9]]


def cycle_policy(continuous):
    state = {"t": 0}

    def act(env, obs):
        t = state["t"]
        state["t"] += 1
        if continuous:
            return np.array(CONTINUOUS_CYCLE[t % len(CONTINUOUS_CYCLE)], dtype=np.float32)
        return DISCRETE_CYCLE[t % len(DISCRETE_CYCLE)]

    return act


def heuristic_policy(continuous):
    def act(env, obs):
        a = heuristic(env, obs)
        return np.asarray(a, dtype=np.float32) if continuous else int(a)

    return act


def random_policy(continuous, seed):
    rng = np.random.default_rng(seed)

    def act(env, obs):
        if continuous:
            return rng.uniform(-1.2, 1.2, size=2).astype(np.float32)
        return int(rng.integers(4))

    return act


def fall_policy(continuous):  # never fires: the lander crashes (game_over, reward -100)
    def act(env, obs):
        return np.zeros(2, dtype=np.float32) if continuous else 0

    return act


def drift_policy(continuous):  # side engine only: drifts out of |x| < 1 or crashes
    def act(env, obs):
        return np.array([0.0, 1.0], dtype=np.float32) if continuous else 3

    return act


# (name, continuous, seed, make kwargs, policy, max steps)
EPISODES = [
    ("discrete_cycle_1", False, 1, {}, cycle_policy, 40),
    ("discrete_cycle_2", False, 2, {}, cycle_policy, 40),
    ("discrete_cycle_3", False, 3, {}, cycle_policy, 40),
    ("discrete_cycle_4", False, 4, {"gravity": -8.0}, cycle_policy, 40),
    ("continuous_cycle_1", True, 11, {}, cycle_policy, 40),
    ("continuous_cycle_2", True, 12, {}, cycle_policy, 40),
    ("continuous_cycle_3", True, 13, {}, cycle_policy, 40),
    ("discrete_wind", False, 21, {"enable_wind": True, "wind_power": 18.0,
                                  "turbulence_power": 1.8}, cycle_policy, 40),
    ("continuous_wind", True, 22, {"enable_wind": True}, cycle_policy, 40),
    ("discrete_heuristic", False, 0, {}, heuristic_policy, 1000),
    ("continuous_heuristic", True, 5, {}, heuristic_policy, 1000),
    ("discrete_fall", False, 31, {}, fall_policy, 1000),
    ("continuous_drift", True, 32, {}, drift_policy, 1000),
    ("discrete_random", False, 33, {}, None, 1000),
    ("continuous_random_wind", True, 34, {"enable_wind": True}, None, 1000),
]


def options_text(kwargs):
    if not kwargs:
        return "-"
    return ",".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}"
                    for k, v in kwargs.items())


def write_episode(out, name, continuous, seed, kwargs, policy_factory, max_steps):
    env = gym.make("LunarLander-v3", continuous=continuous, **kwargs)
    u = env.unwrapped
    rec = RecordingRng(np.random.default_rng(seed))
    u._np_random = rec  # reset(seed=None) keeps it
    obs, _ = env.reset()
    draws = rec.take()
    # heights(12), force x, force y, [wind_idx, torque_idx], dispersion 0, dispersion 1
    heights = draws[0][1]
    force = [draws[1][1][0], draws[2][1][0]]
    rest = draws[3:]
    wind = []
    if kwargs.get("enable_wind"):
        wind = [rest[0][1][0], rest[1][1][0]]
        rest = rest[2:]
    disp = [rest[0][1][0], rest[1][1][0]]
    assert len(rest) == 2 and len(heights) == 12

    policy = (policy_factory(continuous) if policy_factory
              else random_policy(continuous, seed + 1000))
    out.write(f"episode {name} continuous {int(continuous)} seed {seed} options "
              f"{options_text(kwargs)}\n")
    out.write(f"heights {fmt(heights)}\n")
    out.write(f"force {fmt(force)}\n")
    if wind:
        out.write(f"wind {wind[0]} {wind[1]}\n")
    smooth_y = [p[0][1] for p in u.sky_polys] + [u.sky_polys[-1][1][1]]
    out.write(f"terrain {fmt(smooth_y)} | {fmt(edge_vertices(u))} | "
              f"{fmt([u.helipad_x1, u.helipad_x2, u.helipad_y])}\n")
    out.write(f"reset {fmt(disp)} | {body_line(u)} | {fmt(obs)} | {repr(float(u.prev_shaping))}\n")
    for t in range(max_steps):
        a = policy(env, obs)
        obs, reward, terminated, truncated, _ = env.step(a)
        d = rec.take()
        assert len(d) == 2
        action = a if continuous else [a]
        out.write(f"step {fmt(action)} | {fmt([d[0][1][0], d[1][1][0]])} | {body_line(u)} | "
                  f"{fmt(obs)} | {repr(float(reward))} {int(terminated)} | "
                  f"{repr(float(u.prev_shaping))}\n")
        if terminated or truncated:
            break
    env.close()


def heuristic_stats(continuous, episodes, seed0):
    returns = []
    for k in range(episodes):
        env = gym.make("LunarLander-v3", continuous=continuous)  # a fresh env per episode
        obs, _ = env.reset(seed=seed0 + k)
        total = 0.0
        while True:
            a = heuristic(env, obs)
            obs, r, terminated, truncated, _ = env.step(a)
            total += r
            if terminated or truncated:
                break
        returns.append(total)
        env.close()
    r = np.asarray(returns)
    return r.mean(), r.std(ddof=1), len(r)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=str(pathlib.Path(__file__).resolve().parent))
    parser.add_argument("--heuristic-episodes", type=int, default=1000)
    args = parser.parse_args()
    out_dir = pathlib.Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)

    with open(out_dir / "trajectories.txt", "w") as out:
        header(out)
        out.write("# episode NAME continuous 0|1 seed S options k=v,...|-\n"
                  "# heights h0..h11 (uniform(0, H/2) draws)\n"
                  "# force fx fy (uniform(-1000, 1000) draws, x first)\n"
                  "# wind wind_idx torque_idx (integers(-9999, 9999); wind episodes only)\n"
                  "# terrain smooth_y0..10 | moon edge vertices (x1 y1 x2 y2 per fixture, float32)"
                  " | helipad_x1 x2 y\n"
                  "# reset u0 u1 | BODY | obs | prev_shaping   (the step inside reset)\n"
                  "# step action | u0 u1 | BODY | obs | reward terminated | prev_shaping\n"
                  "#   u: the two uniform(-1, 1) dispersion draws (before / SCALE)\n"
                  "#   BODY: x y vx vy angle omega leg0_contact leg1_contact awake game_over\n")
        for e in EPISODES:
            write_episode(out, *e)

    with open(out_dir / "heuristic.txt", "w") as out:
        header(out)
        out.write("# Gymnasium's heuristic(), a fresh env per episode, seeds 100000 + k:\n"
                  "# mode mean std(ddof=1) n\n")
        for continuous in (False, True):
            mean, std, n = heuristic_stats(continuous, args.heuristic_episodes, 100000)
            out.write(f"{'continuous' if continuous else 'discrete'} {float(mean)!r} {float(std)!r} {n}\n")
            print(f"continuous={continuous}: {mean:.3f} +- {std:.3f} (n={n})")


if __name__ == "__main__":
    main()
