#!/usr/bin/env python3
"""Writes the Gymnasium golden data that tests/envs/box2d/bipedal_walker_*_test.cc read.

recur's BipedalWalker runs on Box2D 2.4.1, Gymnasium's on pybox2d (Box2D ~2.3), so trajectories
cannot match bit for bit (docs/BOX2D.md, "Why not bit for bit"). The data is therefore in layers:

  terrain.txt        every numpy draw of reset(seed) (kind, bounds, value, in order) and what
                     Gymnasium built from them: terrain_y, obstacle polygons (float32 vertices read
                     back from Box2D), clouds (poly, x1, x2). recur replays the draws and must
                     build the same (exact layer; normal and hardcore, several seeds).
  short_horizon.txt  fresh env per episode: the reset draws, then fixed actions for a few dozen
                     steps with, after every step, the raw Box2D values the observation and reward
                     read (hull position/velocity/angle, joint angles/speeds, contacts, lidar
                     fractions), the observation, the reward and the flag. recur checks obs and
                     reward from the raw values exactly, and its own physics loosely.
  heuristic.txt      Gymnasium's gait (bipedal_walker.py's BipedalWalkerHeuristics, driven as its
                     __main__ does: a zero action first) over N fresh-env episodes per variant:
                     mean, std, n of the returns (statistical layer).

A FRESH Gymnasium env is made for every episode: Gymnasium reuses its b2World across resets,
which makes later episodes depend on earlier ones (docs/BOX2D.md, "Gymnasium's behaviour, as measured").

    /tmp/b2venv/bin/python tests/data/box2d/bipedal_walker/generate.py [--episodes 1000] [--out DIR]
"""
import argparse
import pathlib
import platform
import time

import Box2D
import gymnasium as gym
import numpy as np
from gymnasium.envs.box2d.bipedal_walker import BipedalWalkerHeuristics
from gymnasium.utils import seeding

ROOT = pathlib.Path(__file__).resolve().parents[4]


def header(what):
    return [
        f"# Gymnasium {gym.__version__}, box2d (pybox2d) {Box2D.__version__}, numpy {np.__version__}, "
        f"Python {platform.python_version()}; written by tests/data/box2d/bipedal_walker/generate.py",
        f"# {what}",
    ]


def fmt(values):
    return " ".join(repr(float(v)) for v in values)


class RecordingGenerator:
    """Forwards the draws BipedalWalker makes (uniform, integers, random) and records them."""

    def __init__(self, gen):
        self.gen = gen
        self.draws = []

    def uniform(self, low=0.0, high=1.0):
        v = self.gen.uniform(low, high)
        self.draws.append(("u", low, high, float(v)))
        return v

    def integers(self, low, high=None):
        v = self.gen.integers(low, high)
        self.draws.append(("i", low, high, int(v)))
        return v

    def random(self):
        v = self.gen.random()
        self.draws.append(("r", 0, 1, float(v)))
        return v


_real_np_random = seeding.np_random
_recorders = []


def _recording_np_random(seed=None):
    gen, s = _real_np_random(seed)
    rec = RecordingGenerator(gen)
    _recorders.append(rec)
    return rec, s


def reset_recorded(env, seed):
    """reset(seed) on a fresh env; returns (obs, the draws reset made)."""
    seeding.np_random = _recording_np_random
    try:
        obs, _ = env.reset(seed=seed)
    finally:
        seeding.np_random = _real_np_random
    return obs, list(_recorders[-1].draws)


def draws_line(draws):
    toks = []
    for kind, low, high, v in draws:
        toks += [kind, repr(float(low)), repr(float(high)), repr(v) if kind != "i" else str(v)]
    return f"draws {len(draws)} " + " ".join(toks)


def polygon_bodies(u):
    # u.terrain was reversed after creation; obstacles were created before the edges.
    out = []
    for body in reversed(u.terrain):
        shape = body.fixtures[0].shape
        if isinstance(shape, Box2D.b2PolygonShape):
            out.append([c for v in shape.vertices for c in v])
    return out


def obstacle_kinds(draws):
    # The hardcore state draws: integers(1, _STATES_ = 4) -> 1 stump, 2 stairs, 3 pit.
    return {v for kind, low, high, v in draws if kind == "i" and low == 1 and high == 4}


def write_terrain(out):
    lines = header("terrain: reset draws and what Gymnasium built from them") + [
        "# case <hardcore> <seed>",
        "# draws <n> (<kind u|i|r> <low> <high> <value>)*   all draws of reset, in order",
        "# terrain_y <200 values>",
        "# obstacle <x0 y0 x1 y1 ...>   float32 vertices read back from Box2D, creation order",
        "# cloud <x1> <x2> <x y> * 5",
    ]
    kinds = set()
    for hardcore, seeds in ((0, (0, 1, 2)), (1, (0, 1, 2, 3, 4, 5))):
        for seed in seeds:
            env = gym.make("BipedalWalker-v3", hardcore=bool(hardcore))
            _, draws = reset_recorded(env, seed)
            u = env.unwrapped
            lines.append(f"case {hardcore} {seed}")
            lines.append(draws_line(draws))
            assert u.terrain_x == [i * (14 / 30.0) for i in range(200)]
            lines.append("terrain_y " + fmt(u.terrain_y))
            for poly in polygon_bodies(u):
                lines.append("obstacle " + fmt(poly))
            for poly, x1, x2 in u.cloud_poly:
                lines.append(f"cloud {fmt([x1, x2])} " + fmt([c for p in poly for c in p]))
            if hardcore:
                kinds |= obstacle_kinds(draws)
            env.close()
    assert kinds == {1, 2, 3}, kinds  # stumps, stairs and pits all appear
    (out / "terrain.txt").write_text("\n".join(lines) + "\n")


def raw_state(u):
    h = u.hull
    vals = [h.position[0], h.position[1], h.linearVelocity[0], h.linearVelocity[1], h.angle,
            h.angularVelocity]
    vals += [j.angle for j in u.joints] + [j.speed for j in u.joints]
    vals += [1.0 if u.legs[1].ground_contact else 0.0, 1.0 if u.legs[3].ground_contact else 0.0]
    vals += [l.fraction for l in u.lidar]
    return vals


# Fixed action programs (float32, as recur's actions): (name, function of step t).
def walk(t):  # a crude alternating gait
    p = 1.0 if (t // 15) % 2 == 0 else -1.0
    return [0.6 * p, -0.4, -0.6 * p, -0.4]


PROGRAMS = {
    "zero": lambda t: [0.0, 0.0, 0.0, 0.0],
    "hips": lambda t: [0.5, -0.3, -0.5, 0.3],
    "walk": walk,
    "kneel": lambda t: [0.2, 1.0, 0.2, 1.0],
    "over": lambda t: [1.5, -2.0, -0.25, 0.75],  # outside the box: Gymnasium clips |a| for torque
    "hipsonly": lambda t: [0.6, 0.0, -0.6, 0.0],  # knees off: no knee pressed into its limit
    "fwd": lambda t: [1.0, 0.0, 1.0, 0.0],  # falls: a terminated episode
}

SHORT = [  # (hardcore, seed, program, steps)
    (0, 0, "zero", 40), (0, 1, "hips", 40), (0, 2, "walk", 60), (0, 3, "kneel", 40),
    (1, 4, "walk", 60), (0, 5, "over", 40), (0, 6, "hipsonly", 40), (1, 7, "zero", 40),
    (0, 8, "fwd", 100),
]


def write_short(out):
    lines = header("short horizon: fixed actions from a fresh env") + [
        "# episode <hardcore> <seed> <program>",
        "# draws ...   (as terrain.txt)",
        "# raw = hull x y vx vy angle omega | joint angle x4 | joint speed x4 | contact x2 | lidar x10",
        "# reset <raw> | <obs>",
        "# step <action> | <raw> | <obs> | <reward> <terminated>",
    ]
    for hardcore, seed, program, steps in SHORT:
        env = gym.make("BipedalWalker-v3", hardcore=bool(hardcore))
        obs, draws = reset_recorded(env, seed)
        u = env.unwrapped
        lines.append(f"episode {hardcore} {seed} {program}")
        lines.append(draws_line(draws))
        lines.append(f"reset {fmt(raw_state(u))} | {fmt(obs)}")
        for t in range(steps):
            a = np.array(PROGRAMS[program](t), dtype=np.float32)
            obs, r, term, trunc, _ = env.step(a)
            lines.append(f"step {fmt(a)} | {fmt(raw_state(u))} | {fmt(obs)} | {repr(float(r))} {int(term)}")
            if term or trunc:
                break
        env.close()
    (out / "short_horizon.txt").write_text("\n".join(lines) + "\n")


def heuristic_episode(env_id, seed):
    env = gym.make(env_id)
    env.reset(seed=seed)
    h = BipedalWalkerHeuristics()
    a = np.array([0.0, 0.0, 0.0, 0.0])
    total, steps = 0.0, 0
    while True:
        s, r, term, trunc, _ = env.step(a)
        total += float(r)
        steps += 1
        if term or trunc:
            break
        a = h.step_heuristic(s)
    env.close()
    return total, steps


def write_heuristic(out, episodes):
    lines = header(f"Gymnasium's heuristic gait, {episodes} fresh-env episodes per id, seeds 0..{episodes - 1}") + [
        "# <id> n <n> mean <mean> std <std, ddof=1> mean_steps <mean episode length>",
    ]
    for env_id in ("BipedalWalker-v3", "BipedalWalkerHardcore-v3"):
        t0 = time.time()
        res = [heuristic_episode(env_id, s) for s in range(episodes)]
        ret = np.array([r for r, _ in res])
        n_steps = np.array([n for _, n in res])
        lines.append(f"{env_id} n {episodes} mean {float(ret.mean())!r} std {float(ret.std(ddof=1))!r} "
                     f"mean_steps {float(n_steps.mean())!r}")
        print(f"{env_id}: {ret.mean():.3f} +- {ret.std(ddof=1):.3f} (n {episodes}), "
              f"{n_steps.mean():.1f} steps/episode, {time.time() - t0:.0f} s")
    (out / "heuristic.txt").write_text("\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(ROOT / "tests/data/box2d/bipedal_walker"))
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--skip-heuristic", action="store_true")
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_terrain(out)
    write_short(out)
    if not args.skip_heuristic:
        write_heuristic(out, args.episodes)


if __name__ == "__main__":
    main()
