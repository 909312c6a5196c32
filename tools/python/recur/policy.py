"""A trained recur policy in Python: :class:`Policy` (load a checkpoint, act on batches with the
recurrent state passed in and out) and :func:`evaluate` (``recur eval`` as a call)."""

from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np

from . import _recur
from .envs import option_strings


def _paths(paths: Sequence[str | os.PathLike] | None) -> list[str]:
    if paths is None:
        return []
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    return [os.fspath(p) for p in paths]


class Policy:
    """A checkpoint's policy (encoder, LSTM/GRU core, heads, observation normalizer), acting the
    way ``recur eval`` acts: the same C++ PolicyActor, on ``"cpu"`` or ``"cuda"``.

    The recurrent state lives with the caller: ``initial_state(n)`` gives zeros of shape
    ``(n, state_size)`` (per row: the actor core's h then c of every layer, then the critic
    core's when it has its own), and ``act`` returns the next one. Where ``episode_start[i]`` is
    set, row i's state is zeroed before the step (pass ``terminations | truncations`` of the
    previous vector step, and all ones on the first).

    Sampling draws from one generator seeded as ``recur eval --seed S`` seeds its own, so a loop
    over ``recur.make_vec(env, n, seed=S)`` with ``Policy.load(ckpt, seed=S)`` reproduces
    ``recur eval --seed S --num-envs n`` step for step, stochastic or deterministic. Results are
    bit-exact for the same batch size; another batch size may differ in the last float bits
    (the matrix products block differently).
    """

    def __init__(self, core: "_recur.Policy"):
        self._core = core

    @classmethod
    def load(
        cls,
        checkpoint: str | os.PathLike,
        device: str = "cpu",
        seed: int | None = None,
        *,
        plugins: Sequence[str | os.PathLike] | None = None,
    ) -> "Policy":
        """``checkpoint``: a run directory of ``recur train`` (its best, else latest checkpoint)
        or a ``.safetensors`` checkpoint file. ``device``: ``"cpu"``, ``"cuda"`` or ``"auto"``.
        ``seed``: the sampling stream (None: a random one). A run trained on a plugin's env
        loads the plugins it recorded (checked unchanged by SHA-256), as ``recur eval`` does;
        ``plugins=[path, ...]`` loads those instead (``--plugin``)."""
        return cls(_recur.Policy(os.fspath(checkpoint), device, seed, _paths(plugins)))

    @property
    def path(self) -> str:
        """The checkpoint file that was loaded."""
        return self._core.path

    @property
    def env_id(self) -> str:
        """The env the policy was trained on ('' when the checkpoint does not record it)."""
        return self._core.env_id

    @property
    def env_options(self) -> dict[str, str]:
        """The env options of the training run: ``recur.make_vec(p.env_id, n, **p.env_options)``."""
        return dict(self._core.env_options)

    @property
    def device(self) -> str:
        return self._core.device

    @property
    def obs_dim(self) -> int:
        return self._core.obs_dim

    @property
    def state_size(self) -> int:
        return self._core.state_size

    @property
    def discrete(self) -> bool:
        return self._core.discrete

    @property
    def action_dim(self) -> int:
        """Discrete: the number of actions; continuous: the action vector's size."""
        return self._core.action_dim

    @property
    def spec(self) -> dict[str, str]:
        """The network's shape as the checkpoint stores it (policy.* and core.* keys)."""
        return dict(self._core.spec)

    @property
    def metadata(self) -> dict[str, str]:
        return dict(self._core.metadata)

    def initial_state(self, n: int) -> np.ndarray:
        """Zero state for ``n`` envs: float32 ``(n, state_size)``."""
        return np.zeros((n, self.state_size), dtype=np.float32)

    def act(
        self,
        obs,
        state,
        episode_start=None,
        deterministic: bool = False,
        *,
        return_info: bool = False,
    ):
        """One step for a batch of ``n`` envs.

        obs: ``(n, obs_dim)`` raw observations (the policy normalizes them itself); state:
        ``(n, state_size)``; episode_start: ``(n,)`` bools (None: no resets).
        Returns ``(actions, new_state)``: int64 ``(n,)`` for a discrete action space, float32
        ``(n, action_dim)`` for a continuous one (unclipped Gaussian samples, as the env takes
        them); with ``return_info=True`` also ``{"log_prob": (n,), "value": (n,)}``.
        """
        obs_shape = f"(n, obs_dim) = (n, {self.obs_dim})"
        if obs is None:
            raise ValueError(f"act: obs is None; expected float32 observations of shape {obs_shape}")
        obs = np.ascontiguousarray(obs, dtype=np.float32)
        if obs.ndim != 2:
            raise ValueError(
                f"act: obs must be a batch {obs_shape}; got shape {obs.shape} (a single "
                "observation is obs[None])"
            )
        n = obs.shape[0]
        state_shape = (n, self.state_size)
        where = (
            f"pass policy.initial_state({n}) on the first step, then the new state act returned"
        )
        if state is None:
            raise ValueError(
                f"act: state is None; expected float32 of shape (n, state_size) = {state_shape} "
                f"for {n} observations: {where}"
            )
        state = np.ascontiguousarray(state, dtype=np.float32)
        if state.shape != state_shape:
            raise ValueError(
                f"act: state has shape {state.shape}; expected (n, state_size) = {state_shape} "
                f"for {n} observations: {where}"
            )
        if episode_start is None:
            starts = np.zeros(n, dtype=np.uint8)
        else:
            starts = np.ascontiguousarray(episode_start, dtype=np.bool_)
            if starts.shape != (n,):
                raise ValueError(
                    f"act: episode_start has shape {starts.shape}; expected ({n},) bools for {n} "
                    "observations (True where an episode starts: terminations | truncations of "
                    "the previous step, all True on the first) or None (no resets)"
                )
            starts = starts.view(np.uint8)
        width = 1 if self.discrete else self.action_dim
        actions = np.empty((n, width), dtype=np.float32)
        new_state = np.empty((n, self.state_size), dtype=np.float32)
        log_probs = np.empty(n, dtype=np.float32)
        values = np.empty(n, dtype=np.float32)
        self._core.act(
            n, obs, state, starts, bool(deterministic), actions, new_state, log_probs, values
        )
        out_actions = actions[:, 0].astype(np.int64) if self.discrete else actions
        if return_info:
            return out_actions, new_state, {"log_prob": log_probs, "value": values}
        return out_actions, new_state

    def export_onnx(self, path: str | os.PathLike) -> str:
        """Writes the whole actor (normalizer, encoder, cores, heads, deterministic action) as an
        ONNX model that ONNX Runtime runs without recur, as ``recur convert export CKPT --to onnx
        --out PATH`` does; returns the path.

        Inputs: ``obs`` float32 ``(batch, obs_dim)``, ``episode_start`` float32 ``(batch,)``
        (nonzero: zero the row's state first), ``h_in`` (and ``c_in`` for an LSTM) float32
        ``(layers, batch, hidden)``, and ``critic_h_in``/``critic_c_in`` for a separate critic
        core. Outputs: ``actions`` (int64 argmax, or the mean clamped to the env's action box),
        ``logits`` or ``mean`` and ``log_std``, ``value``, and ``*_out`` for every ``*_in`` (a
        tanh-squashed actor, ``spec["policy.squash"]``: ``actions`` is its deterministic action
        in its own box, ``log_std`` is per row, ``(batch, action_dim)``). The
        model's metadata_props list them. Raises recur.Error when the checkpoint cannot be
        exported or the path cannot be written (an existing file is then left as it was)."""
        path = os.fspath(path)
        self._core.export_onnx(path)
        return path

    def __repr__(self) -> str:
        return (
            f"Policy({self.path!r}, env={self.env_id!r}, device={self.device!r}, "
            f"state_size={self.state_size})"
        )


def evaluate(
    checkpoint: str | os.PathLike,
    episodes: int = 10,
    *,
    seed: int = 12345,
    num_envs: int = 4,
    deterministic: bool = False,
    env_id: str | None = None,
    device: str = "cpu",
    env: Any = None,
    plugins: Sequence[str | os.PathLike] | None = None,
    threads: int = 1,
    env_options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """``recur eval CHECKPOINT`` as a call (same defaults): returns ``returns``, ``lengths``,
    ``return_mean``, ``return_std``, ``length_mean``, ``checkpoint`` and ``env_id``.

    ``threads``: host threads stepping a registered env's ``num_envs`` envs (``recur eval
    --threads``); the results are the same for any count. Gymnasium envs step themselves, so
    ``env=`` takes only 1. ``env_options``: a registered env's options on top of the run's
    (``recur eval --option``), e.g. ``{"enable_wind": True}``; Gymnasium envs take theirs from
    the factory.

    ``env=``: Gymnasium envs instead of a registered id, as ``recur.train(config, env=...)``
    takes them (a factory: ``num_envs`` of it in a SAME_STEP SyncVectorEnv; or a VectorEnv, used
    as given). Env i is reset with ``recur.derive_seed(seed, i)``. A run on a plugin's env
    loads the plugins it recorded, or ``plugins=[...]`` (as ``Policy.load``)."""
    if env is not None:
        from .gym_batch import EnvSource

        if env_options:
            raise ValueError(
                "evaluate: env_options configure recur's registered envs; give a Gymnasium "
                "env (env=...) its options in its factory instead"
            )
        if threads != 1:
            raise ValueError(
                f"evaluate: threads={threads} steps recur's registered envs; Gymnasium envs "
                "(env=...) step themselves, so leave threads at 1 or vectorize the env yourself"
            )
        source = EnvSource(env)
        batch = (
            source.make_batch(0, "train")
            if source.vector is not None
            else source.make_batch(min(num_envs, episodes), "eval")
        )
        return _recur.evaluate_batch(
            os.fspath(checkpoint), batch, episodes, seed, deterministic, device
        )
    return _recur.evaluate(
        os.fspath(checkpoint), episodes, seed, num_envs, deterministic, env_id, device,
        _paths(plugins), threads, option_strings(env_options or {}),
    )


def record_video(
    checkpoint: str | os.PathLike,
    env: Any,
    path: str | os.PathLike,
    *,
    seed: int = 0,
    deterministic: bool = True,
) -> float:
    """Films one episode of the checkpoint's policy on a Gymnasium env into an MP4 at ``path``
    (N+1 frames of ``env.render()``: build the env with ``render_mode="rgb_array"``) and returns
    its return. ``env``: a factory (or a VectorEnv with ``env_fns``); reset with
    ``recur.derive_seed(seed, 0)``, actions from the stream ``recur eval --seed`` uses."""
    from .gym_batch import EnvSource

    source = EnvSource(env)
    batch = source.make_batch(1, "video")
    if batch is None:
        raise _recur.Error("record_video: this VectorEnv has no env_fns to build an env from")
    os.makedirs(os.path.dirname(os.path.abspath(os.fspath(path))), exist_ok=True)
    return _recur.film(
        os.fspath(checkpoint), batch, os.fspath(path), int(seed),
        deterministic, source.render_fps,
    )


def record_dataset(
    checkpoint: str | os.PathLike | None,
    env: Any = None,
    *,
    dataset_id: str,
    episodes: int = 10,
    seed: int = 0,
    deterministic: bool = True,
    record_state: bool = False,
    out: str | os.PathLike | None = None,
    overwrite: bool = False,
    format: str = "minari",
    description: str = "",
    env_id: str | None = None,
    device: str = "cpu",
    plugins: Sequence[str | os.PathLike] | None = None,
    **env_options: Any,
) -> dict[str, Any]:
    """``recur record CHECKPOINT`` as a call: ``episodes`` episodes of the checkpoint's policy
    (``checkpoint=None``: the uniformly random policy) written as a Minari 0.5 dataset
    ``<out>/<dataset_id>/data/`` (``out`` None: ``$MINARI_DATASETS_PATH``, else
    ``~/.minari/datasets``); ``format="d4rl"`` or ``"both"`` adds/gives ``d4rl.hdf5``.
    Episode i resets with ``seed + i``; ``record_state`` adds ``infos/policy_state``.

    ``env=``: a Gymnasium env instead of a registered one: a factory (called once; the env it
    returns is stepped one episode after another, without autoreset) or a VectorEnv with
    ``env_fns``. Its own truncation (e.g. ``gymnasium.make``'s TimeLimit) is the dataset's
    truncation; the dataset's env_spec is the env's Gymnasium spec (none when it has none).
    Without ``env=``, the env is the checkpoint's (or ``env_id`` with ``env_options``), its
    plugins loaded as in :func:`evaluate`.

    Returns ``env_id``, ``dataset`` (the data/ directory), ``d4rl``, ``episodes``, ``steps``,
    ``returns``, ``lengths``, ``return_mean`` and ``return_std``."""
    target = "" if checkpoint is None else os.fspath(checkpoint)
    root = "" if out is None else os.fspath(out)
    if env is not None:
        from .gym_batch import EnvSource, GymOne

        if env_id is not None or env_options or plugins:
            raise _recur.Error(
                "record_dataset: env= gives the env; env_id, env options and plugins are for "
                "registered envs"
            )
        source = EnvSource(env)
        if source.factory is None:
            raise _recur.Error("record_dataset: this VectorEnv has no env_fns to build an env from")
        one = GymOne(source.factory(), source.name)
        try:
            return _recur.record_dataset_gym(
                target, one, dataset_id, episodes, seed, deterministic, record_state, root,
                overwrite, format, description, device,
            )
        finally:
            one.close()
    from .envs import option_strings

    return _recur.record_dataset(
        target, dataset_id, episodes, seed, deterministic, record_state, env_id or "",
        option_strings(env_options), root, overwrite, format, description, device,
        _paths(plugins),
    )
