"""recur's MuJoCo envs (envs/mujoco) against Gymnasium 1.4.0's, step by step.

Both run the same MuJoCo build (PyPI's mujoco 3.3.7: tools/install-deps.sh installs it for recur,
tools/test-python.sh pins it in the venv; in one process the loader shares the one
libmujoco.so.3.3.7) and read the same XML files (RECUR_GYMNASIUM_ASSETS points recur at
Gymnasium's assets directory). recur's reset draws from its own RNG, so each episode starts from
Gymnasium's reset state: its MuJoCo integration state (mj_getState, mjSTATE_INTEGRATION) is copied
into recur's env (recur's state = that, a flag 0 "as after reset", and zeros; see
envs/mujoco/mujoco_env.h). Then both take the same random actions, a quarter of them outside the
ctrlrange (MuJoCo clamps ctrl; the ctrl cost uses the raw action), until the episode ends or 1000
steps.

Tolerance: none. The observations (float32 in recur, float64 cast to float32 here) and rewards
are compared with ==: same library, same inputs and the same order of floating-point operations
(recur sums the ctrl and contact costs in NumPy's order, envs/mujoco/numpy_sum.h), so they are
bit-identical. Gymnasium's actions are the float32 arrays recur gets, so its ctrl cost is float32
as in recur.
"""

import os
import warnings

import numpy as np
import pytest

import recur

mujoco = pytest.importorskip("mujoco")
gym = pytest.importorskip("gymnasium")

RECUR_MUJOCO_VERSION = "3.3.7"  # cmake/RecurMuJoCo.cmake links only this version

# Gymnasium id -> (positions, velocities) of its observation: the -P/-V slices.
SPLITS = {"HalfCheetah": (8, 9), "Hopper": (5, 6), "Walker2d": (8, 9), "Ant": (13, 14)}
FULL_IDS = [f"{name}-{v}" for name in SPLITS for v in ("v4", "v5")]
PART_IDS = [f"{name}-{p}-{v}" for name in SPLITS for p in ("P", "V") for v in ("v4", "v5")]
ASSETS = os.path.join(os.path.dirname(gym.__file__), "envs", "mujoco", "assets")


@pytest.fixture(autouse=True)
def _recur_with_mujoco(monkeypatch):
    if mujoco.__version__ != RECUR_MUJOCO_VERSION:
        pytest.skip(
            f"Python's mujoco is {mujoco.__version__}, recur runs {RECUR_MUJOCO_VERSION}: exact "
            "parity needs the same library (tools/test-python.sh pins it)"
        )
    monkeypatch.setenv("RECUR_GYMNASIUM_ASSETS", ASSETS)
    try:
        recur.make("HalfCheetah-v5").close()
    except Exception as e:  # recur.make raises recur's error type; the message says why
        if "needs MuJoCo" in str(e):
            pytest.skip(f"recur was built without MuJoCo: {e}")
        raise


def gym_id_of(env_id):
    name, *part, version = env_id.split("-")
    return f"{name}-{version}", name, (part[0] if part else None)


def view(obs, name, part):
    """The block of Gymnasium's observation that the recur id shows, as float32."""
    obs = np.asarray(obs).astype(np.float32)
    if part is None:
        return obs
    p, v = SPLITS[name]
    return obs[:p] if part == "P" else obs[p : p + v]


def copy_state(genv, renv):
    """Gymnasium's integration state into recur's env (flag 0: derived as after reset)."""
    m, d = genv.unwrapped.model, genv.unwrapped.data
    sig = mujoco.mjtState.mjSTATE_INTEGRATION
    s = np.empty(mujoco.mj_stateSize(m, sig))
    mujoco.mj_getState(m, d, s, sig)
    state = np.zeros(renv.state.shape)
    assert state.size == 2 * s.size + 1
    state[: s.size] = s
    renv.state = state
    return renv.unwrapped._obs.copy()


def run(env_id, episodes, max_steps, seed, **options):
    gym_id, name, part = gym_id_of(env_id)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # v4's deprecation notice
        genv = gym.make(gym_id, **options)
    renv = recur.make(env_id, **options)
    assert renv.unwrapped.env_id == env_id
    low, high = genv.action_space.low, genv.action_space.high
    rng = np.random.default_rng(seed)
    stats = {"steps": 0, "terminated": 0, "truncated": 0}
    for episode in range(episodes):
        g_obs, _ = genv.reset(seed=seed * 100 + episode)
        renv.reset(seed=episode)
        r_obs = copy_state(genv, renv)
        np.testing.assert_array_equal(r_obs, view(g_obs, name, part), err_msg=f"{env_id} reset")
        for t in range(max_steps):
            # A quarter of the actions reach 1.5x beyond the ctrlrange.
            scale = 2.0 if rng.random() < 0.25 else 1.0
            a = rng.uniform(low * scale, high * scale).astype(np.float32)
            g_obs, g_rew, g_term, g_trunc, _ = genv.step(a)
            r_obs, r_rew, r_term, r_trunc, _ = renv.step(a)
            where = f"{env_id} episode {episode} step {t + 1}"
            np.testing.assert_array_equal(r_obs, view(g_obs, name, part), err_msg=where)
            assert r_rew == float(g_rew), f"{where}: reward {r_rew!r} vs {float(g_rew)!r}"
            assert (r_term, r_trunc) == (g_term, g_trunc), where
            stats["steps"] += 1
            if g_term or g_trunc:
                stats["terminated"] += int(g_term)
                stats["truncated"] += int(g_trunc)
                break
    genv.close()
    renv.close()
    return stats


@pytest.mark.parametrize("env_id", FULL_IDS)
def test_full_envs_match_gymnasium(env_id):
    stats = run(env_id, episodes=3, max_steps=1000, seed=1)
    # Hopper and Walker2d fall under random actions: the healthy-termination edge is exercised
    # (and v4's +1 on the terminating step against v5's 0).
    if env_id.startswith(("Hopper", "Walker2d")):
        assert stats["terminated"] == 3, stats
    if env_id.startswith("HalfCheetah"):
        assert stats["truncated"] == 3, stats


@pytest.mark.parametrize("env_id", [i for i in FULL_IDS if not i.startswith("HalfCheetah")])
def test_long_episodes_without_termination(env_id):
    # Random actions fell Hopper and Walker2d within tens of steps: run 600 steps past that.
    stats = run(env_id, episodes=1, max_steps=600, seed=3, terminate_when_unhealthy=False)
    assert stats["steps"] == 600, stats


@pytest.mark.parametrize("env_id", PART_IDS)
def test_partial_envs_match_gymnasium_slices(env_id):
    run(env_id, episodes=1, max_steps=300, seed=2)


def test_partial_envs_have_gymnasium_block_sizes():
    for name, (p, v) in SPLITS.items():
        g = gym.make(f"{name}-v5")  # v4 has no observation_structure; its blocks are the same
        structure = g.unwrapped.observation_structure
        assert (structure["qpos"], structure["qvel"]) == (p, v), name
        g.close()
        for version in ("v4", "v5"):
            assert recur.make(f"{name}-P-{version}").observation_space.shape == (p,)
            assert recur.make(f"{name}-V-{version}").observation_space.shape == (v,)
