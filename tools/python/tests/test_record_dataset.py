"""recur.record_dataset: Minari datasets of policies on Python Gymnasium envs (PyGymEnv) and on
registered envs (agent::record_dataset), checked with h5py and Minari's own reader."""

import json
import os
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

import recur
from conftest import REPO
from test_gym_env import MatchSign, short_run

h5py = pytest.importorskip("h5py")


def cartpole_limited():
    """Gymnasium's CartPole-v1 with its TimeLimit at 8 steps: episodes end by truncation."""
    return gym.make("CartPole-v1", max_episode_steps=8)


@pytest.fixture(scope="module")
def matchsign_run(tmp_path_factory):
    return short_run(tmp_path_factory.mktemp("ms"), MatchSign, 512, algo__learning_rate=3e-3)


def policy_episodes(run, factory, seed, episodes):
    """What the policy does on its own: episode i reset with seed + i, deterministic, batch 1."""
    policy = recur.Policy.load(run)
    out = []
    for i in range(episodes):
        env = factory()
        obs, _ = env.reset(seed=seed + i)
        state, start = policy.initial_state(1), np.ones(1, bool)
        ep = {"obs": [obs], "actions": [], "rewards": [], "term": [], "trunc": []}
        while True:
            action, state = policy.act(obs[None], state, start, deterministic=True)
            start[:] = False
            obs, r, term, trunc, _ = env.step(int(action[0]))
            for k, v in (("obs", obs), ("actions", int(action[0])), ("rewards", r),
                         ("term", term), ("trunc", trunc)):
                ep[k].append(v)
            if term or trunc:
                break
        out.append(ep)
    return out


def test_python_env_dataset_is_what_the_policy_did(matchsign_run, tmp_path):
    summary = recur.record_dataset(
        matchsign_run, env=MatchSign, dataset_id="test/matchsign/ppo-v0", episodes=3, seed=40,
        out=tmp_path, record_state=True,
    )
    ref = policy_episodes(matchsign_run, MatchSign, 40, 3)
    state_size = recur.Policy.load(matchsign_run).state_size
    assert summary["env_id"] == "python:MatchSign" and summary["episodes"] == 3
    assert summary["lengths"] == [len(e["rewards"]) for e in ref] == [10, 10, 10]
    assert summary["returns"] == [sum(e["rewards"]) for e in ref]
    data = tmp_path / "test" / "matchsign" / "ppo-v0" / "data"
    assert summary["dataset"] == str(data)
    meta = json.loads((data / "metadata.json").read_text())
    assert "env_spec" not in meta  # MatchSign has no Gymnasium spec: nothing to recover it from
    assert meta["total_episodes"] == 3 and meta["total_steps"] == 30
    with h5py.File(data / "main_data.hdf5") as f:
        for i, e in enumerate(ref):
            g = f[f"episode_{i}"]
            assert g.attrs["seed"] == 40 + i
            np.testing.assert_array_equal(g["observations"][:], np.array(e["obs"], np.float32))
            np.testing.assert_array_equal(g["actions"][:], e["actions"])
            np.testing.assert_array_equal(g["rewards"][:], e["rewards"])
            # MatchSign's own truncation (t >= 10) is the dataset's; it never terminates.
            assert g["truncations"][:].tolist() == e["trunc"] == [False] * 9 + [True]
            assert not g["terminations"][:].any()
            assert g["infos/policy_state"].shape == (11, state_size)
            assert not g["infos/policy_state"][0].any()


def test_gymnasium_time_limit_and_env_spec(tmp_path):
    run = short_run(tmp_path, cartpole_limited, 256)
    summary = recur.record_dataset(
        run, cartpole_limited, dataset_id="test/cartpole/ppo-v0", episodes=3, seed=7,
        out=tmp_path / "ds", format="both",
    )
    ref = policy_episodes(run, cartpole_limited, 7, 3)
    assert summary["lengths"] == [len(e["rewards"]) for e in ref]
    assert summary["returns"] == [sum(e["rewards"]) for e in ref]
    data = tmp_path / "ds" / "test" / "cartpole" / "ppo-v0" / "data"
    meta = json.loads((data / "metadata.json").read_text())
    spec = json.loads(meta["env_spec"])  # Gymnasium's EnvSpec.to_json(), as Minari stores it
    assert spec["id"] == "CartPole-v1" and spec["max_episode_steps"] == 8
    with h5py.File(data / "main_data.hdf5") as f:
        for i, e in enumerate(ref):
            g = f[f"episode_{i}"]
            # TimeLimit's truncation passes through (recur's own limit is off for Python envs).
            assert g["truncations"][:].tolist() == e["trunc"]
            assert g["terminations"][:].tolist() == e["term"]
            np.testing.assert_array_equal(g["actions"][:], e["actions"])
    assert (data.parent / "d4rl.hdf5").is_file()

    minari = pytest.importorskip("minari")
    ds = minari.MinariDataset(str(data))
    assert ds.total_episodes == 3 and ds.spec.env_spec.id == "CartPole-v1"
    for ep, e in zip(ds.iterate_episodes(), ref):
        assert len(ep.rewards) == len(e["rewards"]) and ep.rewards.sum() == sum(e["rewards"])
    env = ds.recover_environment()
    assert env.spec.max_episode_steps == 8


def test_random_policy_and_errors(matchsign_run, tmp_path):
    s = recur.record_dataset(None, MatchSign, dataset_id="test/ms/random-v0", episodes=2,
                             out=tmp_path)
    assert s["lengths"] == [10, 10]
    with pytest.raises(recur.Error, match="already exists|overwrite"):
        recur.record_dataset(None, MatchSign, dataset_id="test/ms/random-v0", episodes=2,
                             out=tmp_path)
    with pytest.raises(recur.Error, match="not a Minari dataset id"):
        recur.record_dataset(matchsign_run, MatchSign, dataset_id="no version", out=tmp_path)
    with pytest.raises(recur.Error, match="does not fit"):
        recur.record_dataset(matchsign_run, cartpole_limited, dataset_id="test/x-v0",
                             out=tmp_path)

    class Fails(MatchSign):
        def step(self, action):
            raise RuntimeError("boom")

    with pytest.raises(recur.Error, match="Fails.*boom"):
        recur.record_dataset(matchsign_run, Fails, dataset_id="test/fails-v0", out=tmp_path)
    assert not (tmp_path / "test" / "fails-v0").exists()


def test_registered_env_dataset(cartpole_run, tmp_path):
    s = recur.record_dataset(cartpole_run, dataset_id="test/cpnv/ppo-v0", episodes=2, seed=3,
                             out=tmp_path)
    assert s["env_id"] == "CartPoleNoVel-v1" and s["episodes"] == 2
    r = recur.evaluate(cartpole_run, episodes=1, num_envs=1, seed=3, deterministic=True)
    s0 = recur.record_dataset(cartpole_run, dataset_id="test/cpnv/one-v0", episodes=1,
                              seed=recur.derive_seed(3, 0), out=tmp_path)
    assert s0["returns"] == r["returns"]
    with h5py.File(tmp_path / "test" / "cpnv" / "ppo-v0" / "data" / "main_data.hdf5") as f:
        assert [len(f[f"episode_{i}"]["rewards"]) for i in range(2)] == s["lengths"]


def readme_check_minari_args():
    """The arguments README.md gives tools/check_minari.py, and the datasets root it assumes."""
    readme = (REPO / "README.md").read_text()
    lines = [l for l in readme.splitlines() if l.startswith("python3 tools/check_minari.py ")]
    assert len(lines) == 1, "README.md: one `python3 tools/check_minari.py ...` line expected"
    args = lines[0].split("#")[0].split()[2:]
    return args


def run_check_minari(*args, **env):
    return subprocess.run(
        [sys.executable, str(REPO / "tools" / "check_minari.py"), *args],
        capture_output=True, text=True, env={**os.environ, **env},
    )


def test_check_minari_runs_as_the_readme_says(tmp_path):
    # README: `python3 tools/check_minari.py ~/.minari/datasets/recur/pendulum/random-v0`, which
    # once failed: "the following arguments are required: --summary".
    args = readme_check_minari_args()
    assert args == ["~/.minari/datasets/recur/pendulum/random-v0"]
    home = tmp_path / "home"
    s = recur.record_dataset(None, env_id="Pendulum-v1", dataset_id="recur/pendulum/random-v0",
                             episodes=2, out=home / ".minari" / "datasets")
    r = run_check_minari(*[os.path.expanduser(a).replace(os.path.expanduser("~"), str(home))
                           for a in args])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "check_minari: OK: 2 episodes, 400 steps" in r.stdout
    assert "recover_environment()" in r.stdout and "Gymnasium's Pendulum-v1" in r.stdout
    # With the summary recur printed, it checks the returns too.
    summary = tmp_path / "summary.json"
    summary.write_text(json.dumps({**s, "dataset_id": "recur/pendulum/random-v0"}))
    r = run_check_minari(str(home / ".minari/datasets/recur/pendulum/random-v0"), "--summary",
                         str(summary))
    assert r.returncode == 0 and "match recur's summary" in r.stdout, r.stdout + r.stderr
    summary.write_text(json.dumps({**s, "dataset_id": "recur/pendulum/random-v0",
                                   "returns": [0.0, 0.0]}))
    r = run_check_minari(str(home / ".minari/datasets/recur/pendulum/random-v0"), "--summary",
                         str(summary))
    assert r.returncode == 1 and "episode 0: return" in r.stdout, r.stdout + r.stderr


def test_novel_env_dataset_recovers_its_env(tmp_path):
    # CartPoleNoVel-v1 (CartPole-v1 without the velocities) is no Gymnasium id: its datasets once
    # had no env_spec, and recover_environment() raised "env_spec is None".
    minari = pytest.importorskip("minari")
    s = recur.record_dataset(None, env_id="CartPoleNoVel-v1", dataset_id="test/cpnv/random-v0",
                             episodes=2, out=tmp_path, max_episode_steps=30)
    data = tmp_path / "test" / "cpnv" / "random-v0" / "data"
    ds = minari.MinariDataset(str(data))
    spec = ds.spec.env_spec
    assert spec.id == "recur/CartPoleNoVel-v1" and spec.max_episode_steps == 30
    assert spec.kwargs == {"env_id": "CartPoleNoVel-v1"}
    assert spec.to_json() == gym.spec("recur/CartPoleNoVel-v1").to_json().replace(
        '"max_episode_steps": 500', '"max_episode_steps": 30')
    env = ds.recover_environment()
    assert env.spec.id == "recur/CartPoleNoVel-v1" and env.spec.max_episode_steps == 30
    assert env.observation_space == ds.observation_space and env.action_space == ds.action_space
    # The recovered env is the one recorded: the same episodes from the same seeds and actions.
    for i, ep in enumerate(ds.iterate_episodes()):
        obs, _ = env.reset(seed=i)  # episode i of seed 0
        assert np.array_equal(obs, ep.observations[0])
        for t, a in enumerate(ep.actions):
            obs, r, term, trunc, _ = env.step(int(a))
            assert np.array_equal(obs, ep.observations[t + 1]) and r == ep.rewards[t]
            assert (term, trunc) == (ep.terminations[t], ep.truncations[t])
        assert not ep.observations[:, [1, 3]].any()  # the velocities, masked (zeroed)
    assert s["lengths"] == [len(ep.rewards) for ep in ds.iterate_episodes()]
    # Env options travel as kwargs (max_episode_steps as the spec's limit), and the checker
    # recovers it through the recur package.
    recur.record_dataset(None, env_id="CartPoleNoVel-v1", dataset_id="test/cpnv/g-v0",
                         episodes=1, out=tmp_path, reset_low=-0.01, reset_high=0.01)
    g = minari.MinariDataset(str(tmp_path / "test" / "cpnv" / "g-v0" / "data"))
    assert g.spec.env_spec.kwargs == {"env_id": "CartPoleNoVel-v1", "reset_high": "0.01",
                                       "reset_low": "-0.01"}
    assert g.spec.env_spec.max_episode_steps == 500
    assert np.abs(g.recover_environment().reset(seed=0)[0]).max() <= 0.01
    r = run_check_minari(str(data))
    assert r.returncode == 0 and "recover_environment() (recur/CartPoleNoVel-v1)" in r.stdout, (
        r.stdout + r.stderr)
