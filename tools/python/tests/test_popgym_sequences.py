"""recur's POPGym sequence envs against the popgym package (1.0.7).

Dynamics: after a seeded popgym reset its hidden state (the dealt deck, counters, the bandit's
arms and the payout draws its generator will make) is put into recur's env; then both envs take
the same actions (a seeded random stream, and a scripted optimal policy that reads popgym's
state) until the episode ends, and observations, rewards, terminated and truncated must be equal
at every step. Rewards are exact: popgym computes them in float64 (the bandit compares a float64
draw with a float32 arm, which recur does too).

Reset distributions: recur's resets cannot match popgym's draw for draw (recur has its own RNG),
so many resets of each are compared statistically with fixed seeds: a chi-square homogeneity
test on the dealt card values (per position and for the first two cards jointly) and a
two-sample Kolmogorov-Smirnov test on the bandit's arms and draws, at level 1e-3.
"""

import math

import numpy as np
import pytest
from popgym.envs.autoencode import AutoencodeEasy, AutoencodeHard, AutoencodeMedium
from popgym.envs.count_recall import CountRecallEasy, CountRecallHard, CountRecallMedium
from popgym.envs.higher_lower import HigherLowerEasy, HigherLowerHard, HigherLowerMedium
from popgym.envs.multiarmed_bandit import (
    MultiarmedBanditEasy,
    MultiarmedBanditHard,
    MultiarmedBanditMedium,
)
from popgym.envs.repeat_first import RepeatFirstEasy, RepeatFirstHard, RepeatFirstMedium
from popgym.envs.repeat_previous import (
    RepeatPreviousEasy,
    RepeatPreviousHard,
    RepeatPreviousMedium,
)

import recur

ALPHA = 1e-3  # level of the distribution tests


def one_hot(n, i):
    v = np.zeros(n, dtype=np.float32)
    v[int(i)] = 1
    return v


# ---------------------------------------------------------------------------------------------
# popgym's hidden state -> recur's state vector, and popgym's observation -> recur's


def deal_order(deck):
    """Card indices in the order popgym deals them (deal() takes from the end of idx)."""
    return deck.idx[::-1]


def dealt(deck):
    return deck.num_cards - len(deck)


def state_deck_one_field(env, field):
    deck = env.deck
    return [*getattr(deck, field)[deal_order(deck)], dealt(deck)]


def state_autoencode(env):
    deck = env.deck
    return [*deck.suits_idx[deal_order(deck)], dealt(deck), dealt(deck) - len(deck["system"])]


def state_count_recall(env):
    values = env.deck_idx_type[deal_order(env.value_deck)]
    queries = env.deck_idx_type[deal_order(env.query_deck)]
    assert dealt(env.value_deck) == dealt(env.query_deck)
    return [*values, *queries, dealt(env.value_deck)]


def state_bandit(env):
    # The draws popgym's generator will make, one per step: a copy of it draws them now.
    gen = np.random.Generator(type(env.np_random.bit_generator)())
    gen.bit_generator.state = env.np_random.bit_generator.state
    draws = gen.random(env.max_episode_length)
    return [*env.bandits.astype(np.float64), *draws, env.num_steps, 0]


def obs_tuple(sizes):
    def convert(obs):
        parts = obs if isinstance(obs, (tuple, list, np.ndarray)) else [obs]
        return np.concatenate([one_hot(n, v) for n, v in zip(sizes, parts, strict=True)])

    return convert


# ---------------------------------------------------------------------------------------------
# Scripted optimal policies that read popgym's state


def optimal_repeat_previous(env):
    hand = env.deck["player"]
    return int(env.deck.suits_idx[hand[-env.k]]) if len(hand) >= env.k else 0


def optimal_repeat_first(env):
    return int(env.card)


def optimal_autoencode(env):
    hand = env.deck["system"]
    return int(env.deck.suits_idx[hand[-1]]) if int(env.mode) == 0 else 0


def optimal_count_recall(env):
    return int(env.counts[env.query])


def optimal_higher_lower(env):
    # Foresight: peek at the next card (the end of the undealt part of idx).
    deck = env.deck
    if len(deck) == 0:
        return 0
    current = deck.ranks_idx[deck["player"][-1]]
    following = deck.ranks_idx[deck.idx[len(deck) - 1]]
    return 0 if following > current else 1


def optimal_bandit(env):
    return int(np.argmax(env.bandits))


# (recur id, popgym class, state function, observation converter, optimal policy)
def _cases():
    suits = obs_tuple([4])
    cases = []
    for name, cls in [
        ("RepeatPreviousEasy-v0", RepeatPreviousEasy),
        ("RepeatPreviousMedium-v0", RepeatPreviousMedium),
        ("RepeatPreviousHard-v0", RepeatPreviousHard),
    ]:
        cases.append(
            (name, cls, lambda e: state_deck_one_field(e, "suits_idx"), suits,
             optimal_repeat_previous)
        )
    for name, cls in [
        ("RepeatFirstEasy-v0", RepeatFirstEasy),
        ("RepeatFirstMedium-v0", RepeatFirstMedium),
        ("RepeatFirstHard-v0", RepeatFirstHard),
    ]:
        cases.append(
            (name, cls, lambda e: state_deck_one_field(e, "suits_idx"), suits, optimal_repeat_first)
        )
    for name, cls in [
        ("AutoencodeEasy-v0", AutoencodeEasy),
        ("AutoencodeMedium-v0", AutoencodeMedium),
        ("AutoencodeHard-v0", AutoencodeHard),
    ]:
        cases.append((name, cls, state_autoencode, obs_tuple([2, 4]), optimal_autoencode))
    for name, cls, kinds in [
        ("CountRecallEasy-v0", CountRecallEasy, 2),
        ("CountRecallMedium-v0", CountRecallMedium, 4),
        ("CountRecallHard-v0", CountRecallHard, 13),
    ]:
        cases.append(
            (name, cls, state_count_recall, obs_tuple([kinds, kinds]), optimal_count_recall)
        )
    for name, cls in [
        ("HigherLowerEasy-v0", HigherLowerEasy),
        ("HigherLowerMedium-v0", HigherLowerMedium),
        ("HigherLowerHard-v0", HigherLowerHard),
    ]:
        cases.append(
            (name, cls, lambda e: state_deck_one_field(e, "ranks_idx"), obs_tuple([13]),
             optimal_higher_lower)
        )
    for name, cls in [
        ("MultiarmedBanditEasy-v0", MultiarmedBanditEasy),
        ("MultiarmedBanditMedium-v0", MultiarmedBanditMedium),
        ("MultiarmedBanditHard-v0", MultiarmedBanditHard),
    ]:
        cases.append((name, cls, state_bandit, obs_tuple([2]), optimal_bandit))
    return cases


CASES = _cases()
IDS = [c[0] for c in CASES]


def test_every_sequence_id_is_registered():
    assert set(IDS) <= set(recur.env_ids())


# ---------------------------------------------------------------------------------------------
# Dynamics


def run_lockstep(env_id, cls, state_fn, convert, policy, seed):
    """Steps popgym and recur together from popgym's reset; returns (steps, return, ended by)."""
    ref = cls()
    obs_ref, _ = ref.reset(seed=seed)
    env = recur.make(env_id)
    env.reset(seed=seed)
    env.state = state_fn(ref)
    np.testing.assert_array_equal(env._obs, convert(obs_ref), err_msg=f"{env_id} reset obs")
    rng = np.random.default_rng(seed)
    total, steps = 0.0, 0
    while True:
        action = policy(ref) if policy is not None else int(rng.integers(ref.action_space.n))
        obs_ref, r_ref, term_ref, trunc_ref, _ = ref.step(action)
        obs, r, term, trunc, _ = env.step(action)
        steps += 1
        where = f"{env_id} seed {seed} step {steps}"
        np.testing.assert_array_equal(obs, convert(obs_ref), err_msg=where)
        assert r == float(r_ref), where
        assert (term, trunc) == (bool(term_ref), bool(trunc_ref)), where
        total += r
        if term or trunc:
            return steps, total, "terminated" if term else "truncated"


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_dynamics_match_popgym_with_random_actions(case):
    env_id, cls, state_fn, convert, _ = case
    for seed in (1, 2):
        run_lockstep(env_id, cls, state_fn, convert, None, seed)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_dynamics_match_popgym_with_an_optimal_policy(case):
    env_id, cls, state_fn, convert, policy = case
    steps, total, ended = run_lockstep(env_id, cls, state_fn, convert, policy, seed=3)
    if not env_id.startswith(("HigherLower", "MultiarmedBandit")):
        # Every answer right: popgym's optimal return 1 (a sum of float64 1/n's).
        assert total == pytest.approx(1.0, abs=1e-12)
        assert ended == "terminated"
    elif env_id.startswith("MultiarmedBandit"):
        assert ended == "truncated" and steps == cls().max_episode_length
    else:
        assert total > 0.5 and ended == "terminated"


# ---------------------------------------------------------------------------------------------
# Reset distributions


def chi2_sf(x, df):
    """P(X > x) for X ~ chi-square(df): the regularized upper incomplete gamma Q(df/2, x/2)."""
    a, z = df / 2.0, x / 2.0
    if z <= 0:
        return 1.0
    if z < a + 1:  # series for the lower function P
        term = total = 1.0 / a
        n = 0
        while abs(term) > 1e-15 * abs(total):
            n += 1
            term *= z / (a + n)
            total += term
        return max(0.0, 1.0 - total * math.exp(-z + a * math.log(z) - math.lgamma(a)))
    # Continued fraction for Q (Lentz), as in Numerical Recipes' gcf.
    b = z + 1 - a
    c = 1e300
    d = 1 / b
    h = d
    for i in range(1, 10000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = 1e-300 if abs(d) < 1e-300 else d
        c = b + an / c
        c = 1e-300 if abs(c) < 1e-300 else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-15:
            break
    return math.exp(-z + a * math.log(z) - math.lgamma(a)) * h


def homogeneity_p(counts_a, counts_b):
    """Chi-square test that two samples of categories come from one distribution."""
    table = np.array([counts_a, counts_b], dtype=np.float64)
    table = table[:, table.sum(axis=0) > 0]
    expected = table.sum(axis=1, keepdims=True) * table.sum(axis=0) / table.sum()
    stat = float(((table - expected) ** 2 / expected).sum())
    return chi2_sf(stat, table.shape[1] - 1)


def ks_reject(a, b):
    """Two-sample Kolmogorov-Smirnov test at level ALPHA (asymptotic critical value)."""
    a, b = np.sort(a), np.sort(b)
    grid = np.concatenate([a, b])
    cdf_a = np.searchsorted(a, grid, "right") / a.size
    cdf_b = np.searchsorted(b, grid, "right") / b.size
    d = np.max(np.abs(cdf_a - cdf_b))
    critical = math.sqrt(-0.5 * math.log(ALPHA / 2) * (a.size + b.size) / (a.size * b.size))
    return d > critical, d, critical


def deck_features(deck, kinds):
    """Category counts of one dealt deck: the value at a few positions, and the first pair."""
    positions = [0, 1, 2, len(deck) // 2, len(deck) - 1]
    per_position = np.zeros((len(positions), kinds))
    for row, p in enumerate(positions):
        per_position[row, int(deck[p])] = 1
    pair = np.zeros(kinds * kinds)
    pair[int(deck[0]) * kinds + int(deck[1])] = 1
    return per_position.ravel(), pair


def deck_counts(decks, kinds):
    pos, pair = 0, 0
    for deck in decks:
        a, b = deck_features(deck, kinds)
        pos, pair = pos + a, pair + b
    return pos, pair


NUM_RESETS = 1500


def reset_decks(env_id, cls, state_fn, deck_of):
    ref = cls()
    popgym_decks = []
    for seed in range(NUM_RESETS):
        ref.reset(seed=seed)
        popgym_decks.append(deck_of(np.asarray(state_fn(ref))))
    env = recur.make(env_id)
    env.reset(seed=12345)
    recur_decks = [deck_of(env.state)]
    for _ in range(NUM_RESETS - 1):
        env.reset()
        recur_decks.append(deck_of(env.state))
    return popgym_decks, recur_decks


def kinds_of(env_id):
    if env_id.startswith("CountRecall"):
        return {"Easy": 2, "Medium": 4, "Hard": 13}[env_id[len("CountRecall"):-3]]
    return 13 if env_id.startswith("HigherLower") else 4


@pytest.mark.parametrize("case", [c for c in CASES if "Bandit" not in c[0]],
                         ids=[i for i in IDS if "Bandit" not in i])
def test_reset_deck_distribution_matches_popgym(case):
    env_id, cls, state_fn, _, _ = case
    kinds = kinds_of(env_id)
    ref = cls()
    num_cards = ref.value_deck.num_cards if hasattr(ref, "value_deck") else ref.deck.num_cards
    decks = [lambda s: s[:num_cards]]
    if env_id.startswith("CountRecall"):
        decks.append(lambda s: s[num_cards:2 * num_cards])
    for deck_of in decks:
        ours, theirs = reset_decks(env_id, cls, state_fn, deck_of)
        for a, b in zip(deck_counts(theirs, kinds), deck_counts(ours, kinds)):
            p = homogeneity_p(a, b)
            assert p > ALPHA, f"{env_id}: reset decks differ from popgym's (p = {p:.2g})"


def test_the_deck_test_detects_a_wrong_shuffle():
    # Negative control: popgym's decks against decks whose first two cards are sorted.
    env_id, cls, state_fn, _, _ = CASES[0]
    theirs, ours = reset_decks(env_id, cls, state_fn, lambda s: s[:52].copy())
    for deck in ours:
        deck[:2] = np.sort(deck[:2])
    _, pair_a = deck_counts(theirs, 4)
    _, pair_b = deck_counts(ours, 4)
    assert homogeneity_p(pair_a, pair_b) < 1e-6


@pytest.mark.parametrize("case", [c for c in CASES if "Bandit" in c[0]],
                         ids=[i for i in IDS if "Bandit" in i])
def test_bandit_reset_distribution_matches_popgym(case):
    env_id, cls, _, _, _ = case
    ref = cls()
    arms, length = ref.num_bandits, ref.max_episode_length
    theirs_arms, theirs_draws = [], []
    for seed in range(300):
        ref.reset(seed=seed)
        theirs_arms.append(ref.bandits.astype(np.float64))
        theirs_draws.append(np.asarray(state_bandit(ref)[arms:arms + length]))
    env = recur.make(env_id)
    env.reset(seed=99)
    ours_arms, ours_draws = [], []
    for _ in range(300):
        s = env.state
        ours_arms.append(s[:arms])
        ours_draws.append(s[arms:arms + length])
        env.reset()
    for name, a, b in [("arms", theirs_arms, ours_arms), ("draws", theirs_draws, ours_draws)]:
        a, b = np.concatenate(a), np.concatenate(b)
        reject, d, critical = ks_reject(a, b)
        assert not reject, f"{env_id} {name}: KS distance {d:.4f} > {critical:.4f}"
    # Arms are float32 draws on popgym's 2^-24 grid.
    grid = np.concatenate(ours_arms) * 2.0**24
    assert np.all(grid == np.floor(grid))


def test_the_ks_test_detects_a_wrong_arm_distribution():
    rng = np.random.default_rng(0)
    reject, _, _ = ks_reject(rng.random(3000), rng.random(3000) ** 1.2)
    assert reject
