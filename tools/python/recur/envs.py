"""recur's C++ envs as Gymnasium envs: :func:`make` (a ``gymnasium.Env``) and :func:`make_vec`
(a ``gymnasium.vector.VectorEnv`` with ``AutoresetMode.SAME_STEP``).

Dynamics are recur's C++ ports of Gymnasium's envs (bit-identical next states for the same state
and action). Reset distributions match Gymnasium's; the random draws do not (recur seeds its own
xoshiro256** generator), so ``reset(seed=s)`` gives other first observations than Gymnasium's env.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.envs.registration import EnvSpec
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from . import _recur


def option_strings(options: dict[str, Any]) -> dict[str, str]:
    """Env options as the C++ registry takes them: text, booleans as true/false."""
    out = {}
    for key, value in options.items():
        if isinstance(value, (bool, np.bool_)):
            out[key] = "true" if value else "false"
        elif isinstance(value, (float, np.floating)):
            out[key] = repr(float(value))
        else:
            out[key] = str(value)
    return out


def to_gym_space(desc: dict) -> spaces.Space:
    """A recur space description (from the C++ core) as a Gymnasium space."""
    if desc["kind"] == "discrete":
        return spaces.Discrete(desc["n"])
    shape = tuple(desc["shape"])
    low = np.asarray(desc["low"], dtype=np.float32).reshape(shape)
    high = np.asarray(desc["high"], dtype=np.float32).reshape(shape)
    return spaces.Box(low=low, high=high, shape=shape, dtype=np.float32)


def _expected_actions(space: spaces.Space, num_envs: int | None = None) -> str:
    """What a step takes, in words: 'an int in Discrete(2)', 'a float32 array of shape (1,) in
    Box(...)', and for num_envs envs one of those per env."""
    if isinstance(space, spaces.Discrete):
        if num_envs is None:
            return f"an int in {space}"
        return f"{num_envs} ints in {space} (shape ({num_envs},))"
    if num_envs is None:
        return f"a float32 array of shape {space.shape} in {space}"
    return f"a float32 array of shape {(num_envs, *space.shape)}, rows in {space}"


def _action_array(action: Any, call: str, name: str, expected: str) -> np.ndarray:
    """``action`` as the C++ step takes it (contiguous float32); None or something that is not
    numeric is ValueError naming the call, the argument and what it expects."""
    if action is None:
        raise ValueError(f"{call}: {name} is None; expected {expected}")
    try:
        return np.ascontiguousarray(action, dtype=np.float32)
    except (TypeError, ValueError) as e:
        raise ValueError(
            f"{call}: {name} {action!r} is not numeric ({e}); expected {expected}"
        ) from None


def _check_seed(seed: Any, call: str, what: str = "seed") -> int | None:
    """None or an int >= 0 (recur seeds a 64-bit generator); anything else is ValueError."""
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"{call}: {what} {seed!r} is not a seed; expected None or an int >= 0")
    return int(seed)


def _spec(env_id: str, options: dict[str, Any], max_episode_steps: int) -> EnvSpec:
    """The spec ``gymnasium.make(spec)`` rebuilds this env from: :func:`gymnasium_env` with the
    options, the time limit as ``max_episode_steps`` (applied by Gymnasium's TimeLimit)."""
    reg = _recur.env_spec(env_id)
    kwargs = {k: v for k, v in options.items() if k != "max_episode_steps"}
    return EnvSpec(
        id=f"recur/{env_id}",
        entry_point=GYMNASIUM_ENTRY_POINT,
        vector_entry_point="recur.envs:RecurVectorEnv",
        reward_threshold=reg["reward_threshold"],
        nondeterministic=False,
        max_episode_steps=max_episode_steps or None,
        kwargs={"env_id": env_id, **kwargs},
    )


class RecurEnv(gym.Env):
    """One recur env as a ``gymnasium.Env``.

    ``recur.make("Pendulum-v1", g=9.81, max_episode_steps=100, render_mode="rgb_array")``.
    The time limit is applied inside (``truncated`` is True on the limit step, as Gymnasium's
    TimeLimit does); stepping after the episode ended raises RuntimeError (reset first). Actions
    outside the action space raise ValueError with recur's message.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 50}

    def __init__(self, env_id: str, render_mode: str | None = None, **options: Any):
        self._core = _recur.Env(env_id, option_strings(options))
        fps = self._core.render_fps
        modes = ["rgb_array"] if (_recur.can_render and fps > 0) else []
        self.metadata = {"render_modes": modes, "render_fps": fps if fps > 0 else None}
        if render_mode is not None and render_mode not in modes:
            raise ValueError(
                f"{env_id}: render_mode {render_mode!r} is not supported; this build renders {modes}"
            )
        self.render_mode = render_mode
        self.observation_space = to_gym_space(self._core.observation_space)
        self.action_space = to_gym_space(self._core.action_space)
        self.max_episode_steps = self._core.max_episode_steps  # 0 = no limit
        self.spec = _spec(env_id, options, self.max_episode_steps)
        self._obs = np.asarray(self._core.observation())  # read-only view of the C++ buffer

    @property
    def env_id(self) -> str:
        return self._core.id

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        seed = _check_seed(seed, f"{self.env_id} reset")
        super().reset(seed=seed)  # Gymnasium's np_random bookkeeping; recur draws from its own RNG
        if options:
            raise ValueError(
                "recur envs take their options at construction: recur.make(env_id, **options)"
            )
        self._core.reset(seed)
        return self._obs.copy(), {}

    def step(self, action):
        call = f"{self.env_id} step"
        action = _action_array(action, call, "action", _expected_actions(self.action_space))
        reward, terminated, truncated = self._core.step(action)
        return self._obs.copy(), reward, terminated, truncated, {}

    def render(self):
        if self.render_mode != "rgb_array":
            return None
        return np.array(self._core.render())  # a copy: (height, width, 3) uint8

    @property
    def state(self) -> np.ndarray:
        """The physical state (Gymnasium's ``env.unwrapped.state``), float64."""
        return np.asarray(self._core.get_state(), dtype=np.float64)

    @state.setter
    def state(self, value) -> None:
        """Replaces the physical state and recomputes the observation (not the step count)."""
        if value is None:
            raise ValueError(
                f"{self.env_id} state: the new state is None; expected {self._core.state_size} "
                "floats (as env.state gives them)"
            )
        self._core.set_state([float(v) for v in np.asarray(value, dtype=np.float64).ravel()])


class RecurVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` copies of one recur env stepped in lockstep by C++ (envs::VectorEnv).

    Autoreset is ``AutoresetMode.SAME_STEP`` (declared in ``metadata["autoreset_mode"]``): on the
    step where env i's episode ends, ``terminations[i]``/``truncations[i]`` say how, ``obs[i]`` is
    already the first observation of its next episode, and ``infos["final_obs"][i]`` holds the
    last observation of the ended one (``infos["_final_obs"]`` masks the rows that ended), with
    ``infos["final_info"]["episode"]`` holding its return ``"r"`` and length ``"l"``. A recurrent
    policy therefore resets its state where ``terminations | truncations`` of the previous step
    is set. Every action is a real transition (no NEXT_STEP "reset step" to mask).

    Seeding: ``reset(seed=s)`` seeds env i with recur's ``derive_seed(s, i)`` (as recur's training
    and ``recur eval --seed s`` do); a list gives one seed per env; ``None`` continues every env's
    generator (the first reset without a seed uses the ``seed`` given to :func:`make_vec`).

    Observations: with ``copy=True`` (Gymnasium's default) every call returns a fresh array; with
    ``copy=False`` ``obs`` is a read-only view of the C++ buffer that the next step overwrites (no
    copy at all). Rewards are float64 and terminations/truncations bool, as SyncVectorEnv.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(
        self,
        env_id: str,
        num_envs: int = 1,
        *,
        seed: int | None = None,
        num_threads: int = 1,
        copy: bool = True,
        **options: Any,
    ):
        self._core = _recur.VectorEnv(env_id, num_envs, option_strings(options), num_threads)
        self.num_envs = self._core.num_envs
        self.single_observation_space = to_gym_space(self._core.observation_space)
        self.single_action_space = to_gym_space(self._core.action_space)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.metadata = dict(RecurVectorEnv.metadata)
        self.render_mode = None
        self.max_episode_steps = self._core.max_episode_steps
        self.spec = _spec(env_id, options, self.max_episode_steps)
        self.copy = copy
        self._first_seed = seed
        self._has_reset = False
        view = lambda name: np.asarray(self._core.view(name))  # noqa: E731
        self._obs = view("obs")
        self._final_obs = view("final_obs")
        self._rewards = view("rewards")  # float32
        self._terminated = view("terminated").view(np.bool_)  # 0/1 bytes read as bool
        self._truncated = view("truncated").view(np.bool_)
        self._final_return = view("final_return")
        self._final_length = view("final_length")

    @property
    def env_id(self) -> str:
        return self._core.id

    @property
    def num_threads(self) -> int:
        return self._core.num_threads

    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ):
        if options:
            raise ValueError(
                "recur vector envs reset every env and take env options at construction: "
                "recur.make_vec(env_id, num_envs, **options)"
            )
        if seed is None and not self._has_reset:
            seed = self._first_seed
        call = f"{self.env_id} reset"
        if seed is None:
            self._core.reset_each([None] * self.num_envs)
        elif isinstance(seed, (int, np.integer)):
            self._core.reset(_check_seed(seed, call))
        else:
            try:
                seeds = list(seed)
            except TypeError:
                raise ValueError(
                    f"{call}: seed {seed!r} is not a seed; expected None, an int >= 0 or a list "
                    f"of {self.num_envs} (one per env, None continues that env's generator)"
                ) from None
            self._core.reset_each([_check_seed(s, call, f"seed[{i}]") for i, s in enumerate(seeds)])
        self._has_reset = True
        return (self._obs.copy() if self.copy else self._obs), {}

    def step(self, actions):
        expected = _expected_actions(self.single_action_space, self.num_envs)
        self._core.step(_action_array(actions, f"{self.env_id} step", "actions", expected))
        obs = self._obs.copy() if self.copy else self._obs
        terminations = self._terminated.copy()
        truncations = self._truncated.copy()
        ended = terminations | truncations
        infos: dict[str, Any] = {}
        if ended.any():
            final_obs = np.full(self.num_envs, None, dtype=object)
            returns = np.zeros(self.num_envs, dtype=np.float64)
            lengths = np.zeros(self.num_envs, dtype=np.int64)
            for i in np.flatnonzero(ended):
                final_obs[i] = self._final_obs[i].copy()
                returns[i] = self._final_return[i]
                lengths[i] = self._final_length[i]
            # The layout VectorEnv._add_info gives Gymnasium's SAME_STEP SyncVectorEnv.
            infos = {
                "final_obs": final_obs,
                "_final_obs": ended,
                "final_info": {
                    "episode": {"r": returns, "l": lengths, "_r": ended.copy(), "_l": ended.copy()},
                    "_episode": ended.copy(),
                },
                "_final_info": ended.copy(),
            }
        return obs, self._rewards.astype(np.float64), terminations, truncations, infos

    def close_extras(self, **kwargs: Any) -> None:
        pass


def make(env_id: str, render_mode: str | None = None, **options: Any) -> RecurEnv:
    """One recur env as a ``gymnasium.Env``; ``options`` are the env's own (``g=9.81``,
    ``max_episode_steps=100``, ...). Unknown ids and options raise ``recur.Error`` naming the
    closest known ones."""
    return RecurEnv(env_id, render_mode=render_mode, **options)


def make_vec(
    env_id: str,
    num_envs: int = 1,
    *,
    seed: int | None = None,
    num_threads: int = 1,
    copy: bool = True,
    **options: Any,
) -> RecurVectorEnv:
    """``num_envs`` recur envs as a ``gymnasium.vector.VectorEnv`` (SAME_STEP autoreset, see
    :class:`RecurVectorEnv`). ``seed`` seeds the first ``reset()`` called without one;
    ``num_threads > 1`` steps slices of the envs on C++ worker threads."""
    return RecurVectorEnv(
        env_id, num_envs, seed=seed, num_threads=num_threads, copy=copy, **options
    )


# gymnasium.make's entry point for recur/<id> (the env_spec of recur's own envs in datasets too).
GYMNASIUM_ENTRY_POINT = "recur.envs:gymnasium_env"


def gymnasium_env(env_id: str, render_mode: str | None = None, **options: Any) -> RecurEnv:
    """The entry point of ``gymnasium.make("recur/<id>")``: the env without its own time limit
    (unless the spec's kwargs set ``max_episode_steps``), because ``gymnasium.make`` wraps it in
    a TimeLimit of the spec's ``max_episode_steps`` (or of its ``max_episode_steps`` argument),
    as it does Gymnasium's own envs: an episode is cut once, at the step Gymnasium's would be.
    The vector entry point gets the limit as an option instead (``gymnasium.make_vec`` passes
    ``max_episode_steps`` to vector entry points)."""
    options.setdefault("max_episode_steps", 0)
    return RecurEnv(env_id, render_mode=render_mode, **options)


def register_gymnasium_ids() -> None:
    """Registers every recur env in Gymnasium's registry as ``recur/<id>``:
    ``gymnasium.make("recur/CartPole-v1")`` and ``gymnasium.make_vec("recur/CartPole-v1", 16,
    vectorization_mode="vector_entry_point")`` (the C++ vector env). The spec's
    ``max_episode_steps`` is the env's registered time limit (Gymnasium's for the ids Gymnasium
    registers; None for envs without one)."""
    for env_id in _recur.env_ids():
        gym_id = f"recur/{env_id}"
        if gym_id in gym.registry:
            continue
        reg = _recur.env_spec(env_id)
        gym.register(
            id=gym_id,
            entry_point=GYMNASIUM_ENTRY_POINT,
            vector_entry_point="recur.envs:RecurVectorEnv",
            reward_threshold=reg["reward_threshold"],
            nondeterministic=False,
            max_episode_steps=reg["max_episode_steps"] or None,
            kwargs={"env_id": env_id},
        )


def load_plugin(path: str | os.PathLike) -> list[str]:
    """Loads a C++ env plugin (a shared library built with ``recur_add_env_plugin``) into this
    process, as ``recur --plugin PATH`` does, and returns the env ids it registered: then
    ``recur.make(id)``, ``recur.make_vec(id, n)``, ``gymnasium.make("recur/<id>")`` and
    ``recur.train`` with ``env.id: <id>`` work. Loading the same file again returns the same
    ids. A missing file, a plugin built against another recur or C++ library, or an id that
    clashes raises ``recur.Error`` with the loader's message, and registers nothing."""
    ids = list(_recur.load_plugin(os.fspath(path))["env_ids"])
    register_gymnasium_ids()
    return ids


def loaded_plugins() -> list[dict[str, Any]]:
    """The plugins this process loaded, in load order: ``path``, ``name``, ``version`` and
    ``env_ids`` of each."""
    return [dict(p) for p in _recur.loaded_plugins()]
