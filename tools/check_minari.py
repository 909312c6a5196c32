#!/usr/bin/env python3
"""Check a dataset written by `recur record` with the real Minari reader (PyPI `minari`).

    python tools/check_minari.py ~/.minari/datasets/recur/pendulum/random-v0
    # also against what recur printed:
    recur record --random --env CartPole-v1 --episodes 5 --dataset-id recur/cartpole/random-v0 \
        --out /tmp/ds --json > /tmp/summary.json
    python tools/check_minari.py /tmp/ds/recur/cartpole/random-v0 --summary /tmp/summary.json
    # or by id: MINARI_DATASETS_PATH=/tmp/ds python tools/check_minari.py recur/cartpole/random-v0

Loads the dataset (minari.MinariDataset on <dir>/data, or minari.load_dataset(id)) and checks:
observation and action spaces (against the env recover_environment() gives, and Gymnasium's own
env for the ids Gymnasium registers); per episode N+1 observations inside the observation space,
N actions inside the action space, one end flag on the last step, infos/episode_start (true at
row 0 only), infos/policy_state (N+1 rows, row 0 zero) when present. With --summary (recur's
JSON summary), also the dataset id, episode and step counts, and the returns and lengths recur
printed. Exits 1 on any mismatch, 2 when the dataset cannot be loaded. Needs: pip install minari
(tools/requirements.txt); the recur Python package for datasets of recur's own envs (their
env_spec is recur/<id>).
"""
import argparse
import json
import os
import sys

import numpy as np


def fail(problems, msg):
    problems.append(msg)
    print(f"MISMATCH: {msg}")


def load(target):
    import minari

    if os.path.isdir(target):
        data = target if os.path.basename(os.path.normpath(target)) == "data" else os.path.join(target, "data")
        return minari.MinariDataset(data)
    return minari.load_dataset(target)


def space_equal(a, b):
    import gymnasium as gym

    if type(a) is not type(b):
        return False
    if isinstance(a, gym.spaces.Discrete):
        return a.n == b.n and a.start == b.start
    if isinstance(a, gym.spaces.Box):
        return (a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a.low, b.low)
                and np.array_equal(a.high, b.high))
    return a == b


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset", help="<root>/<dataset_id> (or its data/ dir), or a dataset id "
                    "looked up under $MINARI_DATASETS_PATH")
    ap.add_argument("--summary",
                    help="also check against the JSON line `recur record ... --json` printed "
                    "('-' for stdin)")
    ap.add_argument("--rtol", type=float, default=1e-12,
                    help="relative tolerance on returns (numpy sums pairwise, recur in order)")
    args = ap.parse_args()

    summary = None
    if args.summary:
        summary = json.load(sys.stdin if args.summary == "-" else open(args.summary))
    try:
        ds = load(args.dataset)
    except Exception as e:  # noqa: BLE001 - any loader failure is the verdict
        print(f"cannot load {args.dataset}: {type(e).__name__}: {e}")
        return 2

    import minari

    problems = []
    print(f"minari {minari.__version__}: loaded {ds.spec.dataset_id} "
          f"({ds.total_episodes} episodes, {ds.total_steps} steps)")
    print(f"  observation_space {ds.observation_space}")
    print(f"  action_space      {ds.action_space}")
    if summary is not None:
        if ds.spec.dataset_id != summary["dataset_id"]:
            fail(problems, f"dataset_id {ds.spec.dataset_id} != {summary['dataset_id']}")
        if ds.total_episodes != summary["episodes"]:
            fail(problems, f"total_episodes {ds.total_episodes} != {summary['episodes']}")
        if ds.total_steps != summary["steps"]:
            fail(problems, f"total_steps {ds.total_steps} != {summary['steps']}")

    # Spaces: the recovered env's, and Gymnasium's own env for the ids it registers (recur's own
    # envs are recur/<id>, recovered through the recur package).
    env_spec = ds.spec.env_spec
    if env_spec is not None:
        import gymnasium as gym

        recovered = ds.recover_environment()
        envs = [("recover_environment()", recovered)]
        if env_spec.namespace != "recur":
            envs.append((f"Gymnasium's {env_spec.id}", gym.make(env_spec.id)))
        for name, env in envs:
            if not space_equal(ds.observation_space, env.observation_space):
                fail(problems, f"observation_space {ds.observation_space} != {name}'s "
                     f"{env.observation_space}")
            if not space_equal(ds.action_space, env.action_space):
                fail(problems, f"action_space {ds.action_space} != {name}'s {env.action_space}")
        if recovered.spec.id != env_spec.id:
            fail(problems, f"recover_environment() gives {recovered.spec.id}, not {env_spec.id}")
        if summary is not None and env_spec.id not in (summary["env_id"],
                                                       f"recur/{summary['env_id']}"):
            fail(problems, f"env_spec {env_spec.id} is not recur's env {summary['env_id']}")
        print(f"  spaces equal those of {' and '.join(n for n, _ in envs)} ({env_spec.id})")
    else:
        print("  no env_spec: spaces checked against the data only")

    returns = summary["returns"] if summary is not None else []
    lengths = summary["lengths"] if summary is not None else []
    ep_returns = []
    with_state = 0
    for i, ep in enumerate(ds.iterate_episodes()):
        n = len(ep.rewards)
        where = f"episode {ep.id}"
        if ep.id != i:
            fail(problems, f"{where}: expected id {i}")
        if ep.observations.shape[0] != n + 1:
            fail(problems, f"{where}: {ep.observations.shape[0]} observations for {n} steps")
        if ep.actions.shape[0] != n or len(ep.terminations) != n or len(ep.truncations) != n:
            fail(problems, f"{where}: actions/terminations/truncations are not {n} rows")
        if ep.observations.shape[1:] != ds.observation_space.shape:
            fail(problems, f"{where}: observation rows {ep.observations.shape[1:]}")
        if not all(ds.observation_space.contains(o) for o in ep.observations):
            # CartPole's termination overshoots the bound it terminates at (Gymnasium's too):
            # only the final observation may leave the Box.
            if not all(ds.observation_space.contains(o) for o in ep.observations[:-1]):
                fail(problems, f"{where}: an observation before the last is outside the space")
        if not all(ds.action_space.contains(a) for a in ep.actions):
            if np.issubdtype(ep.actions.dtype, np.integer):
                fail(problems, f"{where}: an action is outside {ds.action_space}")
        ends = np.logical_or(ep.terminations, ep.truncations)
        if not ends[-1] or ends[:-1].any():
            fail(problems, f"{where}: the episode must end on its last step only")
        start = np.asarray(ep.infos.get("episode_start", []))
        if start.shape != (n + 1,) or not start[0] or start[1:].any():
            fail(problems, f"{where}: infos/episode_start is not (N+1,) with row 0 only")
        if "policy_state" in ep.infos:
            ps = np.asarray(ep.infos["policy_state"])
            with_state += 1
            if ps.shape[0] != n + 1 or ps.ndim != 2:
                fail(problems, f"{where}: infos/policy_state shape {ps.shape}, expected ({n + 1}, S)")
            elif ps[0].any() or not ps[1:].any(axis=1).all():
                fail(problems, f"{where}: policy_state row 0 must be zero and later rows not")
        ret = float(np.sum(ep.rewards))
        ep_returns.append(ret)
        if summary is None:
            continue
        if i >= len(returns):
            fail(problems, f"{where}: not in the summary")
            continue
        if lengths[i] != n:
            fail(problems, f"{where}: length {n} != recur's {lengths[i]}")
        if not np.isclose(ret, returns[i], rtol=args.rtol, atol=0.0):
            fail(problems, f"{where}: return {ret!r} != recur's {returns[i]!r}")
    if with_state:
        print(f"  infos/policy_state in {with_state} episodes")
    if problems:
        print(f"check_minari: {len(problems)} mismatch(es)")
        return 1
    print(f"check_minari: OK: {ds.total_episodes} episodes, {ds.total_steps} steps, returns "
          f"{np.mean(ep_returns):.3f} +- {np.std(ep_returns):.3f}"
          + (" match recur's summary" if summary is not None else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
