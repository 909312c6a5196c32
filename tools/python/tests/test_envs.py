"""recur.make / recur.make_vec against Gymnasium's API and against recur's own single envs."""

import re
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode

import recur

ALL_IDS = recur.env_ids()


def skip_unavailable(env_id):
    """Registered ids this build cannot make (MuJoCo's envs in a build without MuJoCo) skip."""
    spec = recur._recur.env_spec(env_id)
    if not spec["available"]:
        pytest.skip(f"{env_id} is not available in this build: {spec['summary']}")


# ---------------------------------------------------------------------------------------------
# Spaces, shapes, dtypes


@pytest.mark.parametrize(
    "env_id, obs_shape, discrete, action_shape",
    [
        ("CartPole-v1", (4,), True, ()),
        ("Pendulum-v1", (3,), False, (1,)),
        ("Acrobot-v1", (6,), True, ()),
        ("RepeatPreviousEasy-v0", (4,), True, ()),
    ],
)
def test_make_vec_spaces_and_shapes(env_id, obs_shape, discrete, action_shape):
    n = 5
    envs = recur.make_vec(env_id, n, seed=0)
    assert isinstance(envs, gym.vector.VectorEnv)
    assert envs.num_envs == n
    assert envs.single_observation_space.shape == obs_shape
    assert envs.single_observation_space.dtype == np.float32
    assert envs.observation_space.shape == (n, *obs_shape)
    if discrete:
        assert isinstance(envs.single_action_space, gym.spaces.Discrete)
        assert isinstance(envs.action_space, gym.spaces.MultiDiscrete)
    else:
        assert isinstance(envs.single_action_space, gym.spaces.Box)
        assert envs.single_action_space.shape == action_shape
    assert envs.action_space.shape == (n, *action_shape)
    assert envs.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP

    obs, info = envs.reset()
    assert obs.shape == (n, *obs_shape) and obs.dtype == np.float32
    assert obs in envs.observation_space
    assert info == {}
    envs.action_space.seed(0)
    obs, rewards, terminations, truncations, infos = envs.step(envs.action_space.sample())
    assert obs.shape == (n, *obs_shape) and obs.dtype == np.float32
    assert rewards.shape == (n,) and rewards.dtype == np.float64
    assert terminations.shape == (n,) and terminations.dtype == np.bool_
    assert truncations.shape == (n,) and truncations.dtype == np.bool_
    assert isinstance(infos, dict)


def test_single_env_spaces_match_gymnasium():
    for env_id in ["CartPole-v1", "Pendulum-v1", "MountainCar-v0", "Acrobot-v1"]:
        ours, theirs = recur.make(env_id), gym.make(env_id)
        assert ours.observation_space == theirs.observation_space, env_id
        assert ours.action_space == theirs.action_space, env_id


# ---------------------------------------------------------------------------------------------
# Seeding


def test_reset_seed_reproducible():
    a, b = recur.make_vec("CartPole-v1", 8), recur.make_vec("CartPole-v1", 8)
    obs_a, _ = a.reset(seed=42)
    obs_b, _ = b.reset(seed=42)
    np.testing.assert_array_equal(obs_a, obs_b)
    assert not np.array_equal(a.reset(seed=43)[0], obs_a)
    # seed=None continues each env's generator: reproducible after the same seeded reset.
    a.reset(seed=42)
    next_a = a.reset()[0]
    b.reset(seed=42)
    np.testing.assert_array_equal(b.reset()[0], next_a)
    assert not np.array_equal(next_a, obs_a)
    # make_vec(seed=) seeds the first reset without one.
    np.testing.assert_array_equal(recur.make_vec("CartPole-v1", 8, seed=42).reset()[0], obs_a)


def test_reset_int_seed_is_derived_per_env():
    n, seed = 4, 7
    envs = recur.make_vec("CartPole-v1", n)
    obs, _ = envs.reset(seed=seed)
    per_env = envs.reset(seed=[recur.derive_seed(seed, i) for i in range(n)])[0]
    np.testing.assert_array_equal(obs, per_env)
    for i in range(n):
        single = recur.make("CartPole-v1").reset(seed=recur.derive_seed(seed, i))[0]
        np.testing.assert_array_equal(obs[i], single)
    with pytest.raises(ValueError, match="3 seeds for 4 envs"):
        envs.reset(seed=[1, 2, 3])


# ---------------------------------------------------------------------------------------------
# Autoreset: SAME_STEP, checked against single envs stepped by hand


@pytest.mark.parametrize("env_id", ["CartPole-v1", "Pendulum-v1", "MountainCarContinuous-v0"])
@pytest.mark.parametrize("num_threads", [1, 2])
def test_same_step_autoreset_matches_hand_loop(env_id, num_threads):
    n, steps, limit = 6, 400, 30  # a short time limit: truncations as well as terminations
    seeds = [100 + i for i in range(n)]
    envs = recur.make_vec(env_id, n, num_threads=num_threads, max_episode_steps=limit)
    singles = [recur.make(env_id, max_episode_steps=limit) for _ in range(n)]
    obs, _ = envs.reset(seed=seeds)
    for i, e in enumerate(singles):
        np.testing.assert_array_equal(obs[i], e.reset(seed=seeds[i])[0])
    returns = np.zeros(n)
    lengths = np.zeros(n, dtype=np.int64)
    envs.action_space.seed(1)
    ends = 0
    for _ in range(steps):
        actions = envs.action_space.sample()
        obs, rewards, terminations, truncations, infos = envs.step(actions)
        ended = terminations | truncations
        for i, e in enumerate(singles):
            o, r, term, trunc, _ = e.step(actions[i])
            returns[i] += r
            lengths[i] += 1
            assert rewards[i] == np.float32(r)
            assert terminations[i] == term and truncations[i] == trunc
            if term or trunc:
                # The ended episode's last observation and statistics are in the infos; obs
                # already holds the next episode's first observation (the env's RNG continues).
                assert infos["_final_obs"][i] and infos["_final_info"][i]
                np.testing.assert_array_equal(infos["final_obs"][i], o)
                assert infos["final_info"]["episode"]["r"][i] == pytest.approx(returns[i])
                assert infos["final_info"]["episode"]["l"][i] == lengths[i]
                o, _ = e.reset()
                returns[i], lengths[i] = 0, 0
                ends += 1
            elif ended.any():
                assert not infos["_final_obs"][i] and infos["final_obs"][i] is None
            np.testing.assert_array_equal(obs[i], o)
        if not ended.any():
            assert infos == {}
    assert ends > 0


def test_final_info_layout_is_gymnasiums():
    """The infos of an ending step have exactly the layout VectorEnv._add_info builds."""
    n = 3
    envs = recur.make_vec("CartPole-v1", n, max_episode_steps=2)
    envs.reset(seed=0)
    envs.step(np.zeros(n, dtype=np.int64))
    _, _, _, truncations, infos = envs.step(np.zeros(n, dtype=np.int64))
    assert truncations.all()
    expected = {}
    for i in range(n):
        expected = envs._add_info(
            expected,
            {
                "final_obs": infos["final_obs"][i],
                "final_info": {
                    "episode": {
                        "r": float(infos["final_info"]["episode"]["r"][i]),
                        "l": int(infos["final_info"]["episode"]["l"][i]),
                    }
                },
            },
            i,
        )
    assert infos.keys() == expected.keys()
    np.testing.assert_array_equal(infos["_final_obs"], expected["_final_obs"])
    for key in ("r", "l", "_r", "_l"):
        got, want = infos["final_info"]["episode"][key], expected["final_info"]["episode"][key]
        assert got.dtype == want.dtype, key
        np.testing.assert_array_equal(got, want)


def test_record_episode_statistics_wrapper():
    envs = gym.wrappers.vector.RecordEpisodeStatistics(recur.make_vec("CartPole-v1", 4, seed=0))
    envs.action_space.seed(0)
    envs.reset()
    seen = 0
    for _ in range(200):
        _, _, terminations, truncations, infos = envs.step(envs.action_space.sample())
        if "episode" in infos:
            mask = infos["_episode"]
            np.testing.assert_allclose(
                infos["episode"]["r"][mask], infos["final_info"]["episode"]["r"][mask]
            )
            np.testing.assert_array_equal(
                infos["episode"]["l"][mask], infos["final_info"]["episode"]["l"][mask]
            )
            seen += int(mask.sum())
    assert seen > 0


def test_copy_flag():
    fresh = recur.make_vec("CartPole-v1", 2, seed=0)
    a, _ = fresh.reset()
    b, *_ = fresh.step(np.zeros(2, dtype=np.int64))
    assert not np.shares_memory(a, b)
    viewed = recur.make_vec("CartPole-v1", 2, seed=0, copy=False)
    c, _ = viewed.reset()
    d, *_ = viewed.step(np.zeros(2, dtype=np.int64))
    assert d is c and not c.flags.writeable  # the C++ buffer itself, read-only
    np.testing.assert_array_equal(d, b)


# ---------------------------------------------------------------------------------------------
# Dynamics against Gymnasium's own envs from the same state


@pytest.mark.parametrize(
    "env_id, actions",
    [
        ("CartPole-v1", [0, 1]),
        ("MountainCar-v0", [0, 1, 2]),
        ("Acrobot-v1", [0, 1, 2]),
        ("Pendulum-v1", [np.array([-2.0], np.float32), np.array([1.3], np.float32)]),
    ],
)
def test_dynamics_equal_gymnasium_from_the_same_state(env_id, actions):
    ours = recur.make(env_id)
    theirs = gym.make(env_id).unwrapped
    theirs.reset(seed=0)
    ours.reset(seed=0)
    ours.state = np.asarray(theirs.state, dtype=np.float64)  # Gymnasium's initial state
    rng = np.random.default_rng(0)
    for t in range(100):
        a = actions[rng.integers(len(actions))]
        o1, r1, term1, _, _ = ours.step(a)
        o2, r2, term2, _, _ = theirs.step(a)
        np.testing.assert_array_equal(o1, o2, err_msg=f"{env_id} step {t}")
        # Pendulum's cost mixes the float32 action with Python floats: numpy 2 (NEP 50) keeps
        # that term in float32, numpy 1 promotes it to float64, so rewards agree to ~1e-9 only.
        assert r1 == pytest.approx(r2, rel=1e-7, abs=1e-7)
        assert term1 == term2
        if term1:
            break


# ---------------------------------------------------------------------------------------------
# Gymnasium's env checker and registry

# check_env's warnings that Gymnasium's own envs raise too: unbounded Box observations
# (CartPole, Acrobot's velocities are bounded but CartPole's are not) and the advice on
# non-normalized Box actions (Pendulum's [-2, 2]).
BENIGN = [
    r"A Box observation space (minimum|maximum) value is (-)?infinity",
    r"For Box action spaces, we recommend using a symmetric and normalized space",
]


@pytest.mark.parametrize("env_id", ALL_IDS)
def test_check_env(env_id):
    skip_unavailable(env_id)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(recur.make(env_id))
    unexpected = [
        str(w.message) for w in caught if not any(re.search(p, str(w.message)) for p in BENIGN)
    ]
    assert unexpected == []


def test_render_rgb_array():
    if not recur._recur.can_render:
        pytest.skip("this build has RECUR_RECORDING=OFF")
    env = recur.make("CartPole-v1", render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.shape == (400, 600, 3) and frame.dtype == np.uint8
    assert env.metadata["render_fps"] == 50
    assert recur.make("CartPole-v1").render() is None


def gymnasium_counterparts():
    """recur's env ids that Gymnasium registers too."""
    return [i for i in recur.env_ids() if i in gym.registry]


def test_gymnasium_counterparts_exist():
    assert {"CartPole-v1", "Pendulum-v1", "Acrobot-v1", "MountainCar-v0"} <= set(
        gymnasium_counterparts()
    )


@pytest.mark.parametrize("env_id", gymnasium_counterparts())
def test_gymnasium_spec_time_limit_is_gymnasiums(env_id):
    # recur/<id> once had max_episode_steps=None (its limit was only inside the env).
    skip_unavailable(env_id)
    theirs = gym.spec(env_id).max_episode_steps
    assert gym.spec(f"recur/{env_id}").max_episode_steps == theirs
    assert recur.make(env_id).max_episode_steps == theirs
    assert recur.make(env_id).spec.max_episode_steps == theirs


def run_until_end(env, action, limit):
    env.reset(seed=0)
    for t in range(1, limit + 1):
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            return t, terminated, truncated
    return None


def test_gymnasium_make_truncates_once_where_gymnasium_does():
    # Pendulum never terminates: every episode ends by the time limit alone.
    action = np.zeros(1, np.float32)
    assert run_until_end(gym.make("recur/Pendulum-v1"), action, 1000) == (200, False, True)
    assert run_until_end(gym.make("Pendulum-v1"), action, 1000) == (200, False, True)
    # gymnasium.make's own max_episode_steps replaces the limit rather than adding one to it.
    assert run_until_end(gym.make("recur/Pendulum-v1", max_episode_steps=250), action, 1000) == (
        250, False, True)
    assert run_until_end(gym.make("recur/Pendulum-v1", max_episode_steps=-1), action, 400) is None
    # The vector entry point takes the limit as the env option.
    envs = gym.make_vec("recur/Pendulum-v1", 2, vectorization_mode="vector_entry_point")
    assert envs.unwrapped.max_episode_steps == 200
    envs.reset(seed=0)
    for t in range(1, 201):
        _, _, terms, truncs, _ = envs.step(np.zeros((2, 1), np.float32))
        assert truncs.all() == (t == 200) and not terms.any()
    # recur.make keeps its limit inside; gymnasium.make(env.spec) rebuilds the same env.
    env = recur.make("Pendulum-v1", g=9.81, max_episode_steps=7)
    assert env.spec.max_episode_steps == 7 and env.spec.kwargs == {"env_id": "Pendulum-v1",
                                                                   "g": 9.81}
    assert run_until_end(env, action, 100) == (7, False, True)
    assert run_until_end(gym.make(env.spec), action, 100) == (7, False, True)


def test_gymnasium_registry():
    env = gym.make("recur/CartPole-v1")
    obs, _ = env.reset(seed=0)
    assert obs.shape == (4,)
    envs = gym.make_vec("recur/CartPole-v1", 3, vectorization_mode="vector_entry_point")
    assert isinstance(envs.unwrapped, recur.RecurVectorEnv)
    assert envs.reset(seed=0)[0].shape == (3, 4)


# ---------------------------------------------------------------------------------------------
# Bad input: Python exceptions carrying recur's messages


def test_unknown_env_id():
    with pytest.raises(recur.Error, match="unknown env id 'CartPole-v9'.*Closest known ids"):
        recur.make("CartPole-v9")
    with pytest.raises(ValueError, match="unknown env id"):  # recur.Error is a ValueError
        recur.make_vec("Cartpole", 2)


def test_unknown_option():
    with pytest.raises(recur.Error, match="unknown option 'gravity'"):
        recur.make("Pendulum-v1", gravity=9.81)
    env = recur.make("Pendulum-v1", g=9.81, max_episode_steps=7)
    assert env.max_episode_steps == 7


def test_bad_actions():
    envs = recur.make_vec("CartPole-v1", 2)
    with pytest.raises(RuntimeError, match="call reset"):
        envs.step(np.zeros(2, dtype=np.int64))
    envs.reset(seed=0)
    with pytest.raises(ValueError, match="actions hold 3 floats; expected num_envs 2"):
        envs.step(np.zeros(3, dtype=np.int64))
    with pytest.raises(ValueError, match=r"env index 1: .*action 2 is not in Discrete\(2\)"):
        envs.step(np.array([0, 2]))
    env = recur.make("Pendulum-v1")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="Pendulum-v1"):
        env.step(np.array([0.0, 1.0], dtype=np.float32))
    with pytest.raises(ValueError, match="options at construction"):
        env.reset(options={"low": -0.1})


def test_missing_arguments_name_what_was_expected():
    # step(None) once became the action nan: "action nan is not in Discrete(2)".
    env = recur.make("CartPole-v1")
    env.reset(seed=0)
    with pytest.raises(
        ValueError, match=r"CartPole-v1 step: action is None; expected an int in Discrete\(2\)"
    ):
        env.step(None)
    with pytest.raises(ValueError, match=r"action 'left' is not numeric .*Discrete\(2\)"):
        env.step("left")
    env = recur.make("Pendulum-v1")
    env.reset(seed=0)
    with pytest.raises(
        ValueError, match=r"Pendulum-v1 step: action is None; expected a float32 array of "
        r"shape \(1,\) in Box\(-2.0, 2.0, \(1,\), float32\)"
    ):
        env.step(None)
    with pytest.raises(ValueError, match=r"state: the new state is None; expected \d+ floats"):
        env.state = None
    with pytest.raises(ValueError, match=r"reset: seed -1 is not a seed; expected None or an int"):
        env.reset(seed=-1)
    envs = recur.make_vec("CartPole-v1", 2)
    envs.reset(seed=0)
    with pytest.raises(
        ValueError, match=r"CartPole-v1 step: actions is None; expected 2 ints in Discrete\(2\) "
        r"\(shape \(2,\)\)"
    ):
        envs.step(None)
    with pytest.raises(ValueError, match=r"reset: seed\[1\] 'x' is not a seed"):
        envs.reset(seed=[0, "x"])
    with pytest.raises(ValueError, match=r"reset: seed 1.5 is not a seed; expected None, an int"):
        envs.reset(seed=1.5)
    envs = recur.make_vec("Pendulum-v1", 3)
    envs.reset(seed=0)
    with pytest.raises(ValueError, match=r"actions is None; expected a float32 array of shape "
                       r"\(3, 1\), rows in Box"):
        envs.step(None)
