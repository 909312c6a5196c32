"""recur's MuJoCo envs (envs/mujoco) against Gymnasium 1.4.0's, step by step.

Both run the same MuJoCo build (PyPI's mujoco 3.3.7: tools/install-deps.sh installs it for recur,
tools/test-python.sh pins it in the venv; in one process the loader shares the one
libmujoco.so.3.3.7) and read the same XML files: recur gets the file Gymnasium's env loaded as
its xml_file option (and RECUR_GYMNASIUM_ASSETS points at Gymnasium's assets directory for the
envs made without it). recur's reset draws from its own RNG, so each episode starts from
Gymnasium's reset state: its MuJoCo integration state (mj_getState, mjSTATE_INTEGRATION) is copied
into recur's env (recur's state = that, a flag 0 "as after reset", and zeros; see
envs/mujoco/mujoco_env.h). Then both take the same random actions, a quarter of them outside the
ctrlrange (MuJoCo clamps ctrl; the ctrl cost uses the raw action), until the episode ends or 1000
steps.

Tolerance: none, except where NumPy computes with its own kernels. The observations (float32 in
recur, float64 cast to float32 here) and rewards are compared with ==: same library, same inputs
and the same order of floating-point operations (recur sums the ctrl and contact costs in NumPy's
order, envs/mujoco/numpy_sum.h), so they are bit-identical. Gymnasium's actions are the float32
arrays recur gets, so its ctrl cost is float32 as in recur. The exceptions (LAST_BIT below):
np.sin/np.cos (InvertedDoublePendulum's and Reacher's observations) may use NumPy's SIMD
kernels rather than libm's, and np.linalg.norm (Reacher's reward) is a BLAS dot product whose
summation order and FMA use recur does not reproduce; both are within 1 ulp of the exact value,
so those observation values may differ by 1 float32 ulp and Reacher's reward by a few float64
ulps (compared with rtol 1e-14). Humanoid's reward uses the center of mass, np.einsum("b,bj->j",
body_mass, xipos), whose order of additions is einsum's own (SIMD partial sums): its x differs
by a few ulps of ~1 m (~1e-15), divided by dt = 0.015 and weighted by 1.25: abs 1e-11 covers
that with margin, far below the reward's scale (~5). (Measured with NumPy 2 on this machine:
Reacher's rewards differ by at most 2.2e-16, Humanoid's are identical over 3000 steps, and every
observation value is identical, the sin/cos ones included.)
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
# Envs with full observations only.
OTHER_IDS = [
    f"{name}-{v}"
    for name in ("Swimmer", "InvertedPendulum", "InvertedDoublePendulum", "Reacher", "Humanoid")
    for v in ("v4", "v5")
]
ASSETS = os.path.join(os.path.dirname(gym.__file__), "envs", "mujoco", "assets")
# Observation values that come from np.sin/np.cos (see the module docstring): up to 1 float32 ulp.
LAST_BIT = {"InvertedDoublePendulum": slice(1, 5), "Reacher": slice(0, 4)}
# Rewards NumPy computes with kernels recur does not reproduce (see the module docstring).
REWARD_TOLERANCE = {
    "Reacher": {"rel": 1e-14, "abs": 1e-15},
    "Humanoid": {"rel": 0, "abs": 1e-11},
}


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


def assert_obs_equal(r_obs, g_obs, name, where):
    """Exact, but for the np.sin/np.cos values of LAST_BIT (1 float32 ulp)."""
    r_obs, g_obs = np.asarray(r_obs), np.asarray(g_obs)
    assert r_obs.shape == g_obs.shape, where
    rest = np.ones(r_obs.shape, bool)
    if name in LAST_BIT:
        rest[LAST_BIT[name]] = False
        np.testing.assert_array_max_ulp(r_obs[~rest], g_obs[~rest], maxulp=1)
    np.testing.assert_array_equal(r_obs[rest], g_obs[rest], err_msg=where)


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


def run(env_id, episodes, max_steps, seed, action_scale=1.0, **options):
    gym_id, name, part = gym_id_of(env_id)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # v4's deprecation notice
        genv = gym.make(gym_id, **options)
    # The file Gymnasium loaded, as recur's xml_file option (Gymnasium's v4 envs take no xml_file).
    renv = recur.make(env_id, xml_file=genv.unwrapped.fullpath, **options)
    assert renv.unwrapped.env_id == env_id
    low, high = genv.action_space.low, genv.action_space.high
    rng = np.random.default_rng(seed)
    stats = {"steps": 0, "terminated": 0, "truncated": 0}
    for episode in range(episodes):
        g_obs, _ = genv.reset(seed=seed * 100 + episode)
        renv.reset(seed=episode)
        r_obs = copy_state(genv, renv)
        assert_obs_equal(r_obs, view(g_obs, name, part), name, f"{env_id} reset")
        for t in range(max_steps):
            # A quarter of the actions reach 1.5x beyond the ctrlrange.
            scale = 2.0 if rng.random() < 0.25 else 1.0
            scale *= action_scale
            a = rng.uniform(low * scale, high * scale).astype(np.float32)
            g_obs, g_rew, g_term, g_trunc, _ = genv.step(a)
            r_obs, r_rew, r_term, r_trunc, _ = renv.step(a)
            where = f"{env_id} episode {episode} step {t + 1}"
            assert_obs_equal(r_obs, view(g_obs, name, part), name, where)
            if name in REWARD_TOLERANCE:  # see the module docstring
                assert r_rew == pytest.approx(float(g_rew), **REWARD_TOLERANCE[name]), where
            else:
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


@pytest.mark.parametrize("env_id", OTHER_IDS)
def test_other_envs_match_gymnasium(env_id):
    stats = run(env_id, episodes=3, max_steps=1000, seed=4)
    if env_id.startswith(("Inverted", "Humanoid")):
        # Random actions topple the poles and the humanoid: the termination edge, and v5's 0
        # (healthy) reward on it.
        assert stats["terminated"] == 3, stats
    else:  # Swimmer and Reacher never terminate: the time limit (1000, Reacher 50) truncates
        assert stats["truncated"] == 3, stats
        assert stats["steps"] == 3 * (50 if env_id.startswith("Reacher") else 1000), stats


@pytest.mark.parametrize("env_id", [i for i in OTHER_IDS if i.startswith("Inverted")])
def test_pendulums_with_small_actions(env_id):
    # Full-range random actions topple the poles within a few steps: small ones keep them up
    # longer (tens of steps), so that more of the dynamics is compared.
    stats = run(env_id, episodes=5, max_steps=1000, seed=5, action_scale=0.05)
    assert stats["steps"] > 5 * 8, stats


@pytest.mark.parametrize(
    "env_id",
    [i for i in FULL_IDS if not i.startswith("HalfCheetah")] + ["Humanoid-v4", "Humanoid-v5"],
)
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
