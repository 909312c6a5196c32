"""Gymnasium envs as recur's batched env (envs::BatchEnv): :class:`GymBatch`.

recur's actor steps a ``gymnasium.vector.VectorEnv`` through this adapter: one Python call per
batched step (``GymBatch.step``, called from C++ with the GIL taken for that call only), which
calls the vector env's ``step`` once and writes into preallocated numpy buffers that the C++ side
reads in place. The buffers follow recur's SAME_STEP contract (envs/batch_env.h):

* SAME_STEP vector envs: obs row i after an episode's end is the next episode's first
  observation, ``final_obs`` row i comes from ``infos["final_obs"]`` (where ``infos["_final_obs"]``).
* NEXT_STEP vector envs (Gymnasium's default): the step after env i's end is its reset step (its
  action ignored, reward 0). It is reported as no transition (``transition[i] = 0``), the learner
  masks it out of GAE and the losses, ``episode_start[i]`` is 1 after it (its obs row is the new
  episode's first) and the episode's length does not count it. The final observation is the obs
  row of the step that ended the episode.
* DISABLED vector envs are refused.

Spaces: a 1-D ``Box`` observation; a ``Discrete`` (start 0) or 1-D ``Box`` action. Box actions are
clipped to the space's bounds before ``step`` (as Stable-Baselines3 does).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import _recur

try:  # Gymnasium >= 1.1
    from gymnasium.vector import AutoresetMode
except ImportError:  # pragma: no cover
    AutoresetMode = None


def _mode_name(mode: Any) -> str:
    """metadata["autoreset_mode"] (an AutoresetMode or its value) as the enum's name."""
    if mode is None:
        return "NEXT_STEP"  # Gymnasium's default, and the only mode before 1.1
    if AutoresetMode is not None and not isinstance(mode, AutoresetMode):
        try:
            mode = AutoresetMode(mode)
        except ValueError:
            return str(mode)
    return str(getattr(mode, "name", mode))


def check_spaces(observation_space: Any, action_space: Any, what: str) -> None:
    """recur.Error naming the space when recur's policies cannot take it."""
    import gymnasium.spaces as spaces

    if not isinstance(observation_space, spaces.Box) or len(observation_space.shape) != 1:
        raise _recur.Error(
            f"{what}: observation space {observation_space} is not supported: recur's policies "
            "take a 1-D Box (flatten it, e.g. gymnasium.wrappers.FlattenObservation)"
        )
    if isinstance(action_space, spaces.Discrete):
        if int(action_space.start) != 0:
            raise _recur.Error(
                f"{what}: action space {action_space} is not supported: a Discrete action "
                "space must start at 0"
            )
    elif not isinstance(action_space, spaces.Box) or len(action_space.shape) != 1:
        raise _recur.Error(
            f"{what}: action space {action_space} is not supported: recur's policies act in a "
            "Discrete or a 1-D Box space"
        )


def _set_space_layout(target: Any, obs_space: Any, act_space: Any, what: str) -> None:
    """Checks the spaces and sets what the C++ side reads of them on `target` (GymBatch, GymOne):
    obs_dim, discrete, action_n, action_dim and the float32 bounds."""
    import gymnasium.spaces as spaces

    check_spaces(obs_space, act_space, what)
    target.obs_dim = int(obs_space.shape[0])
    target.discrete = isinstance(act_space, spaces.Discrete)
    target.action_n = int(act_space.n) if target.discrete else 0
    target.action_dim = 1 if target.discrete else int(act_space.shape[0])
    target.obs_low = np.ascontiguousarray(
        np.broadcast_to(obs_space.low, (target.obs_dim,)), np.float32
    )
    target.obs_high = np.ascontiguousarray(
        np.broadcast_to(obs_space.high, (target.obs_dim,)), np.float32
    )
    if target.discrete:
        target.action_low = target.action_high = np.zeros(0, np.float32)
    else:
        target.action_low = np.ascontiguousarray(act_space.low, np.float32)
        target.action_high = np.ascontiguousarray(act_space.high, np.float32)


class GymBatch:
    """A ``gymnasium.vector.VectorEnv`` behind recur's batch buffers (see the module docstring).

    ``name`` names the envs in recur's messages and run metadata."""

    def __init__(self, envs: Any, name: str):
        self.envs = envs
        self.name = name
        self.mode = _mode_name(envs.metadata.get("autoreset_mode"))
        if self.mode not in ("SAME_STEP", "NEXT_STEP"):
            raise _recur.Error(
                f"{name}: autoreset mode {self.mode} is not supported: recur steps vector envs "
                "with SAME_STEP or NEXT_STEP autoreset (Gymnasium's default)"
            )
        obs_space, act_space = envs.single_observation_space, envs.single_action_space
        _set_space_layout(self, obs_space, act_space, name)
        n = self.num_envs = int(envs.num_envs)
        self.reward_threshold = None
        spec = getattr(envs, "spec", None)
        if spec is not None and getattr(spec, "reward_threshold", None) is not None:
            self.reward_threshold = float(spec.reward_threshold)
        # recur's buffers (the C++ side reads and writes them in place).
        self.actions = np.zeros((n, self.action_dim), np.float32)
        self.obs = np.zeros((n, self.obs_dim), np.float32)
        self.final_obs = np.zeros((n, self.obs_dim), np.float32)
        self.rewards = np.zeros(n, np.float32)
        self.terminated = np.zeros(n, np.uint8)
        self.truncated = np.zeros(n, np.uint8)
        self.episode_start = np.ones(n, np.uint8)
        self.transition = np.ones(n, np.uint8)
        self.final_return = np.zeros(n, np.float64)
        self.final_length = np.zeros(n, np.int32)
        self._return = np.zeros(n, np.float64)
        self._length = np.zeros(n, np.int32)
        self._resetting = np.zeros(n, bool)  # NEXT_STEP: the next step of env i is its reset

    # Called by recur's C++ (envs::BatchEnv::reset / step).
    def reset(self, seed: int) -> None:
        seeds = [int(_recur.derive_seed(seed, i)) for i in range(self.num_envs)]
        obs, _ = self.envs.reset(seed=seeds)
        self.obs[:] = np.asarray(obs, np.float32).reshape(self.num_envs, self.obs_dim)
        self.rewards[:] = 0
        self.terminated[:] = 0
        self.truncated[:] = 0
        self.episode_start[:] = 1
        self.transition[:] = 1
        self._return[:] = 0
        self._length[:] = 0
        self._resetting[:] = False

    def step(self) -> None:
        if self.discrete:
            actions = self.actions[:, 0].astype(np.int64)
        else:
            actions = np.clip(self.actions, self.action_low, self.action_high)
        obs, rewards, terminations, truncations, infos = self.envs.step(actions)
        n = self.num_envs
        obs = np.asarray(obs, np.float32).reshape(n, self.obs_dim)
        rewards = np.asarray(rewards, np.float64).reshape(n)
        term = np.asarray(terminations, bool).reshape(n)
        trunc = np.asarray(truncations, bool).reshape(n)
        self.obs[:] = obs
        if self.mode == "SAME_STEP":
            done = term | trunc
            self.rewards[:] = rewards
            self._return += rewards
            self._length += 1
            if done.any():
                final_obs, mask = infos["final_obs"], infos["_final_obs"]
                for i in np.flatnonzero(done):
                    if not mask[i]:
                        raise RuntimeError(f"{self.name}: env {i} ended without infos['final_obs']")
                    self.final_obs[i] = np.asarray(final_obs[i], np.float32).reshape(-1)
        else:  # NEXT_STEP: envs that ended last step spent this one on their reset
            resetting = self._resetting
            term &= ~resetting
            trunc &= ~resetting
            done = term | trunc
            self.rewards[:] = np.where(resetting, 0.0, rewards)
            self._return += self.rewards
            self._length += ~resetting
            self.transition[:] = ~resetting
            self.final_obs[done] = obs[done]
        self.terminated[:] = term
        self.truncated[:] = trunc
        if done.any():
            self.final_return[done] = self._return[done]
            self.final_length[done] = self._length[done]
            self._return[done] = 0
            self._length[done] = 0
        if self.mode == "SAME_STEP":
            self.episode_start[:] = done
        else:
            self.episode_start[:] = self._resetting
            self._resetting = done

    def render(self) -> Any:
        """Env 0's frame (rgb_array), for videos."""
        frames = self.envs.render()
        if frames is None:
            return None
        return frames[0] if isinstance(frames, (tuple, list)) else frames


class GymOne:
    """One ``gymnasium.Env`` behind recur's single-env buffers: what ``PyGymEnv``
    (src/gym_env.h), an ``envs::Env``, steps when recording a dataset. No autoreset: recur resets
    it. ``reset(seed)`` passes the seed (or None) to ``env.reset``; ``step()`` reads
    ``actions`` (a Discrete action as its float index; Box actions clipped to the bounds) and
    writes ``obs``, ``reward``, ``terminated`` and ``truncated`` (Gymnasium's own flag, e.g. its
    TimeLimit's, which recur reports as its truncation)."""

    def __init__(self, env: Any, name: str):
        self.env = env
        self.name = name
        obs_space, act_space = env.observation_space, env.action_space
        _set_space_layout(self, obs_space, act_space, name)
        # What a Minari dataset says of the env: Gymnasium's spec when the env has one.
        spec = getattr(env, "spec", None)
        self.env_spec_json = None
        self.max_episode_steps = 0
        self.reward_threshold = None
        if spec is not None:
            try:
                self.env_spec_json = spec.to_json()
            except Exception:  # noqa: BLE001 - e.g. kwargs that are not JSON: no env_spec then
                self.env_spec_json = None
            self.max_episode_steps = int(spec.max_episode_steps or 0)
            if spec.reward_threshold is not None:
                self.reward_threshold = float(spec.reward_threshold)
        # recur's buffers (the C++ side reads and writes them in place).
        self.actions = np.zeros(self.action_dim, np.float32)
        self.obs = np.zeros(self.obs_dim, np.float32)
        self.reward = np.zeros(1, np.float64)
        self.terminated = np.zeros(1, np.uint8)
        self.truncated = np.zeros(1, np.uint8)

    # Called by recur's C++ (PyGymEnv::reset_impl / step_impl).
    def reset(self, seed: int | None) -> None:
        obs, _ = self.env.reset(seed=seed)
        self.obs[:] = np.asarray(obs, np.float32).reshape(self.obs_dim)

    def step(self) -> None:
        if self.discrete:
            action = int(self.actions[0])
        else:
            action = np.clip(self.actions, self.action_low, self.action_high)
        obs, reward, terminated, truncated, _ = self.env.step(action)
        self.obs[:] = np.asarray(obs, np.float32).reshape(self.obs_dim)
        self.reward[0] = float(reward)
        self.terminated[0] = bool(terminated)
        self.truncated[0] = bool(truncated)

    def close(self) -> None:
        self.env.close()


def env_name(env: Any) -> str:
    """A name for recur's messages and metadata: the Gymnasium id when the env has a spec."""
    spec = getattr(env, "spec", None)
    if spec is not None and getattr(spec, "id", None):
        return str(spec.id)
    unwrapped = getattr(env, "unwrapped", env)
    return type(unwrapped).__name__


def same_step_vector(factory: Callable[[], Any], n: int) -> Any:
    """``n`` envs from ``factory`` in a SyncVectorEnv with SAME_STEP autoreset."""
    import gymnasium

    return gymnasium.vector.SyncVectorEnv(
        [factory] * n, autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP
    )


class EnvSource:
    """What ``recur.train(config, env=...)`` was given, as recur's C++ asks for envs:
    ``make_batch(n, role)`` with role "train" (the training envs), "eval" (evaluation envs) or
    "video" (one env to film).

    * a factory (a callable returning a ``gymnasium.Env``): SyncVectorEnvs of it, SAME_STEP for
      training and evaluation, NEXT_STEP (the final frame shows the final state) to film;
    * a ``gymnasium.vector.VectorEnv`` (Sync or Async, SAME_STEP or NEXT_STEP): trained on as
      given (``env.num_envs`` becomes ``env.num_envs`` of the config); evaluations and videos
      use its ``env_fns`` (Sync/AsyncVectorEnv keep them) in SyncVectorEnvs, else are skipped.
    """

    def __init__(self, env: Any):
        import gymnasium

        self.vector = None
        probe = None
        if isinstance(env, gymnasium.vector.VectorEnv):
            self.vector = env
            fns = getattr(env, "env_fns", None)
            self.factory = fns[0] if fns else None
            self.name = env_name(env)
            if self.factory is not None:
                probe = _probe(self.factory)
                if self.name in ("SyncVectorEnv", "AsyncVectorEnv"):
                    self.name = env_name(probe)
            check_spaces(env.single_observation_space, env.single_action_space, self.name)
        elif isinstance(env, gymnasium.Env):
            raise _recur.Error(
                f"env={env_name(env)}: give recur a factory (e.g. lambda: gymnasium.make(...)) "
                "or a gymnasium.vector.VectorEnv, not a single env instance: recur builds "
                "env.num_envs copies"
            )
        elif callable(env):
            self.factory = env
            probe = _probe(env)
            self.name = env_name(probe)
            check_spaces(probe.observation_space, probe.action_space, self.name)
        else:
            raise _recur.Error(
                f"env={env!r}: expected a callable returning a gymnasium.Env or a "
                "gymnasium.vector.VectorEnv"
            )
        self.reward_threshold = None
        self.render_fps = 30
        if probe is not None:
            spec = getattr(probe, "spec", None)
            if spec is not None and spec.reward_threshold is not None:
                self.reward_threshold = float(spec.reward_threshold)
            self.render_fps = int(probe.metadata.get("render_fps") or 30)
        self._vector_used = False

    @property
    def num_envs(self) -> int | None:
        return int(self.vector.num_envs) if self.vector is not None else None

    def make_batch(self, n: int, role: str) -> GymBatch | None:
        import gymnasium

        if role == "train" and self.vector is not None:
            if self._vector_used:  # pragma: no cover (recur asks once per run)
                raise RuntimeError("the vector env given is already in use")
            self._vector_used = True
            return GymBatch(self.vector, self.name)
        if self.factory is None:
            return None
        if role == "video":
            envs = gymnasium.vector.SyncVectorEnv(
                [self.factory], autoreset_mode=gymnasium.vector.AutoresetMode.NEXT_STEP
            )
        else:
            envs = same_step_vector(self.factory, n)
        return GymBatch(envs, self.name)


def _probe(factory: Callable[[], Any]) -> Any:
    """One env of `factory`, closed at once: its spaces, spec and metadata."""
    env = factory()
    try:
        env.close()
    except Exception:  # pragma: no cover
        pass
    return env
