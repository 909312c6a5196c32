"""recur's POPGym control tasks against the popgym 1.0.7 package, every id at every difficulty.

recur draws from its own Rng, not numpy's PCG64, so parity is checked in two parts:
1. Dynamics: after a seeded POPGym reset, POPGym's hidden state is copied into recur's env
   (``env.state``), then both step with the same actions to the episode's end: observations,
   rewards, terminated and truncated are equal at every step (exactly: recur's physics and the
   reward transforms use POPGym's float64/float32 arithmetic), and so are the physical states.
   The noisy tasks' Gaussian draws are put aside by injecting them: POPGym's noise of the current
   observation is recorded as it is drawn, its next draw is peeked from a copy of its np_random,
   and both go into recur's state, which holds the current and the next noise. The noisy
   observations then match exactly too.
2. Distributions (fixed seeds, so deterministic): two-sample Kolmogorov-Smirnov tests on every
   component of the reset state (recur vs POPGym), and on the noise: recur's own draws against
   the N(0, sigma) CDF, and recur's (observation - clean observation) against POPGym's under the
   same random policy. Thresholds are the KS critical values at alpha = 0.001; the test also
   checks that the statistic rejects a 15% wrong sigma, so it has the power to catch one.
"""

import math

import numpy as np
import pytest
from popgym.envs import noisy_position_only_cartpole as ncp
from popgym.envs import noisy_position_only_pendulum as npd
from popgym.envs import position_only_cartpole as pcp
from popgym.envs import position_only_pendulum as ppd
from popgym.envs import velocity_only_cartpole as vcp

import recur

LEVELS = ["Easy", "Medium", "Hard"]
MODULES = {
    "PositionOnlyCartPole": pcp,
    "VelocityOnlyCartPole": vcp,
    "NoisyPositionOnlyCartPole": ncp,
    "PositionOnlyPendulum": ppd,
    "NoisyPositionOnlyPendulum": npd,
}
CASES = [(task, level) for task in MODULES for level in LEVELS]
# POPGym's difficulty parameters, as popgym/envs/*.py set them.
LENGTH = {
    "PositionOnlyCartPole": [200, 400, 600],
    "VelocityOnlyCartPole": [200, 400, 600],
    "NoisyPositionOnlyCartPole": [200, 200, 200],
    "PositionOnlyPendulum": [200, 150, 100],
    "NoisyPositionOnlyPendulum": [200, 200, 200],
}
SIGMA = [0.1, 0.2, 0.3]


def popgym_env(task, level):
    return getattr(MODULES[task], task + level)()


def is_cart(task):
    return "CartPole" in task


def is_noisy(task):
    return task.startswith("Noisy")


def peek_noise(env):
    """The noise POPGym's next add_noise_to_obs will draw, from a copy of its np_random."""
    g = np.random.Generator(np.random.PCG64())
    g.bit_generator.state = env.np_random.bit_generator.state
    return g.normal(0, env.noise_sigma).astype(np.float32)


def record_noise(env):
    """Makes env record every noise it adds (peeked just before the draw, so it is that draw)."""
    drawn = []
    add = env.add_noise_to_obs

    def recording(obs):
        drawn.append(peek_noise(env))
        return add(obs)

    env.add_noise_to_obs = recording
    return drawn


def physics(task, env):
    return np.asarray(env.state, dtype=np.float64)


def recur_state(task, env, noise_now=None, noise_next=None):
    """POPGym's hidden state in recur's layout (see envs/popgym/control_*.h)."""
    parts = [physics(task, env)]
    if task == "VelocityOnlyCartPole":
        parts.append([1.0 if env.num_steps == 0 else 0.0])
    if is_noisy(task):
        parts += [noise_now, noise_next]
    return np.concatenate([np.asarray(p, np.float64) for p in parts])


def balance(s):
    """A linear controller that keeps CartPole upright from its true state for 600+ steps."""
    return int(s[2] + 0.5 * s[3] + 0.01 * s[0] + 0.1 * s[1] > 0)


def play_both(task, level, seed, policy):
    """One POPGym episode and recur's from POPGym's state; asserts equality at every step."""
    theirs = popgym_env(task, level)
    ours = recur.make(task + level + "-v0")
    drawn = record_noise(theirs) if is_noisy(task) else None
    o2, _ = theirs.reset(seed=seed)
    ours.reset(seed=seed)
    if is_noisy(task):
        ours.state = recur_state(task, theirs, drawn[-1], peek_noise(theirs))
    else:
        ours.state = recur_state(task, theirs)
    np.testing.assert_array_equal(ours._obs, np.asarray(o2, np.float32), err_msg="reset")
    rng = np.random.default_rng(seed)
    steps, total = 0, 0.0
    while True:
        a = policy(theirs, rng)
        o1, r1, term1, trunc1, _ = ours.step(a)
        o2, r2, term2, trunc2, _ = theirs.step(a)
        steps += 1
        where = f"{task}{level} seed {seed} step {steps}"
        np.testing.assert_array_equal(o1, np.asarray(o2, np.float32), err_msg=where)
        assert r1 == r2, where
        assert (term1, trunc1) == (bool(term2), bool(trunc2)), where
        n = len(physics(task, theirs))
        np.testing.assert_array_equal(ours.state[:n], physics(task, theirs), err_msg=where)
        total += r1
        if term1 or trunc1:
            return steps, total, term1, trunc1
        if is_noisy(task):
            # recur drew its own next noise; put POPGym's next draw there instead.
            s = ours.state
            s[-2:] = peek_noise(theirs)
            ours.state = s


def random_action(task):
    if is_cart(task):
        return lambda _, rng: int(rng.integers(2))
    return lambda _, rng: rng.uniform(-2.5, 2.5, size=(1,)).astype(np.float32)  # some clipped


@pytest.mark.parametrize("task, level", CASES)
def test_dynamics_equal_popgym_from_its_state(task, level):
    length = LENGTH[task][LEVELS.index(level)]
    for seed in range(3):
        steps, _, term, trunc = play_both(task, level, seed, random_action(task))
        assert steps <= length and (term or (trunc and steps == length))
    if is_cart(task):
        # The balancing controller reaches the end: truncated at the length, return 1.0.
        steps, total, term, trunc = play_both(
            task, level, 7, lambda env, rng: balance(np.asarray(env.state))
        )
        assert (steps, term, trunc) == (length, False, True)
        assert total == pytest.approx(1.0, abs=1e-12)
        # Pushing one way falls over: terminated, not truncated.
        steps, _, term, trunc = play_both(task, level, 8, lambda env, rng: 0)
        assert term and not trunc and steps < 40


@pytest.mark.parametrize("task, level", CASES)
def test_spaces_and_limits_match_popgym(task, level):
    theirs = popgym_env(task, level)
    ours = recur.make(task + level + "-v0")
    assert ours.max_episode_steps == LENGTH[task][LEVELS.index(level)]
    assert ours.observation_space.shape == theirs.observation_space.shape
    np.testing.assert_array_equal(ours.observation_space.low, theirs.observation_space.low)
    np.testing.assert_array_equal(ours.observation_space.high, theirs.observation_space.high)
    assert str(ours.action_space) == str(theirs.action_space)
    if is_noisy(task):
        assert theirs.noise_sigma[0] == SIGMA[LEVELS.index(level)]


# ---------------------------------------------------------------------------------------------
# Distributions


def ks_two_sample(a, b):
    a, b = np.sort(a), np.sort(b)
    x = np.concatenate([a, b])
    fa = np.searchsorted(a, x, side="right") / len(a)
    fb = np.searchsorted(b, x, side="right") / len(b)
    return float(np.max(np.abs(fa - fb)))


def ks_critical(n, m=None):
    """The two-sided KS critical value at alpha = 0.001 (c(alpha) = 1.949)."""
    return 1.949 * math.sqrt(1 / n + (1 / m if m else 0))


def ks_normal(x, sigma):
    x = np.sort(np.asarray(x, np.float64))
    n = len(x)
    cdf = np.array([0.5 * (1 + math.erf(v / (sigma * math.sqrt(2)))) for v in x])
    i = np.arange(1, n + 1)
    return float(max(np.max(i / n - cdf), np.max(cdf - (i - 1) / n)))


@pytest.mark.parametrize("task, level", CASES)
def test_reset_distribution_matches_popgym(task, level):
    n = 1000
    theirs = popgym_env(task, level)
    ours = recur.make(task + level + "-v0")
    a, b = [], []
    for i in range(n):
        theirs.reset(seed=10_000 + i)
        a.append(physics(task, theirs))
        ours.reset(seed=i)
        b.append(ours.state[: len(a[-1])])
    a, b = np.array(a), np.array(b)
    for k in range(a.shape[1]):
        d = ks_two_sample(a[:, k], b[:, k])
        assert d < ks_critical(n, n), f"state[{k}]: KS {d:.4f}"


def clean_obs(task, state):
    """The noise-free observation of a physical state, as POPGym computes it (float32)."""
    if is_cart(task):
        return np.array([state[0], state[2]], np.float32)
    return np.array([math.cos(state[0]), math.sin(state[0])], np.float32)


@pytest.mark.parametrize("task", ["NoisyPositionOnlyCartPole", "NoisyPositionOnlyPendulum"])
@pytest.mark.parametrize("level", LEVELS)
def test_noise_distribution_matches_popgym(task, level):
    sigma = SIGMA[LEVELS.index(level)]
    ours = recur.make(task + level + "-v0")
    theirs = popgym_env(task, level)
    # CartPole balanced from its true state (long episodes, many draws); Pendulum at random.
    act = (lambda state, rng: balance(state)) if is_cart(task) else random_action(task)
    draws, ours_diff, theirs_diff = [], [], []
    rng = np.random.default_rng(0)
    for ep in range(60):
        ours.reset(seed=ep)
        while True:
            s = ours.state
            draws.extend(s[-4:-2])  # the current observation's noise, before clipping
            ours_diff.extend(ours._obs - clean_obs(task, s))
            _, _, term, trunc, _ = ours.step(act(s, rng))
            if term or trunc:
                break
    rng = np.random.default_rng(0)
    for ep in range(60):
        obs, _ = theirs.reset(seed=ep)
        while True:
            s = np.asarray(theirs.state)
            theirs_diff.extend(obs - clean_obs(task, s))
            obs, _, term, trunc, _ = theirs.step(act(s, rng))
            if term or trunc:
                break
    # recur's draws are N(0, sigma); a 15% wrong sigma is rejected by the same test.
    n = len(draws)
    assert n >= 20_000
    assert ks_normal(draws, sigma) < ks_critical(n), ks_normal(draws, sigma)
    assert ks_normal(draws, 1.15 * sigma) > 2 * ks_critical(n)
    assert abs(np.mean(draws)) < 5 * sigma / math.sqrt(n)
    assert np.std(draws) == pytest.approx(sigma, rel=0.03)
    # What the agent sees (noise after clipping) is distributed as POPGym's.
    d = ks_two_sample(np.array(ours_diff), np.array(theirs_diff))
    assert d < ks_critical(len(ours_diff), len(theirs_diff)), d
