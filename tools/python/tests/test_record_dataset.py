"""recur.record_dataset: Minari datasets of policies on Python Gymnasium envs (PyGymEnv) and on
registered envs (agent::record_dataset), checked with h5py and Minari's own reader."""

import json

import gymnasium as gym
import numpy as np
import pytest

import recur
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
