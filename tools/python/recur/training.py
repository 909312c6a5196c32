"""``recur train`` as a call: :func:`train`."""

from __future__ import annotations

import os
import pathlib
from typing import Any, Iterable, Mapping

from . import _recur
from .overrides import yaml_value


def override_strings(
    overrides: Mapping[str, Any] | Iterable[str] | None, kwargs: Mapping[str, Any]
) -> list[str]:
    """``{"algo.learning_rate": 3e-4}``, ``["algo.learning_rate=3e-4"]`` and keyword arguments
    ``algo__learning_rate=3e-4`` (``__`` separates the key path) as ``section.key=value``."""
    out: list[str] = []
    if isinstance(overrides, Mapping):
        out += [f"{k}={yaml_value(v)}" for k, v in overrides.items()]
    elif overrides is not None:
        for item in overrides:
            if not isinstance(item, str) or "=" not in item:
                raise ValueError(f"override {item!r}: expected 'section.key=value'")
            out.append(item)
    out += [f"{k.replace('__', '.')}={yaml_value(v)}" for k, v in kwargs.items()]
    return out


def train(
    config: str | os.PathLike | None = None,
    overrides: Mapping[str, Any] | Iterable[str] | None = None,
    *,
    resume: str | os.PathLike | None = None,
    env: Any = None,
    **kwargs: Any,
) -> pathlib.Path:
    """Trains from a YAML config as ``recur train CONFIG --set ...`` does and returns the run
    directory (absolute), which holds config.yaml, progress.csv, monitor.csv, eval.csv and
    checkpoints/.

    Overrides, applied in order (dict or list first, then keywords)::

        recur.train("configs/cartpole_novel.yaml", {"algo.learning_rate": 3e-4},
                    run__total_env_steps=20000, policy__encoder=[64, 64])

    ``resume=RUN_DIR`` continues that run from its latest checkpoint (its config.yaml plus the
    overrides). Ctrl-C finishes the current update, writes a checkpoint and raises
    KeyboardInterrupt naming the run directory. Bad keys or values raise ``recur.Error`` with
    the config file, line and allowed values.

    ``env=`` trains on Gymnasium envs instead of the config's ``env.id``: a factory (a callable
    returning a ``gymnasium.Env``; recur steps ``env.num_envs`` of them in a SyncVectorEnv with
    SAME_STEP autoreset) or a ``gymnasium.vector.VectorEnv`` (Sync or Async, SAME_STEP or
    NEXT_STEP autoreset; its ``num_envs`` sets ``env.num_envs``). The observation space must be
    a 1-D Box, the action space Discrete or a 1-D Box. Evaluations and videos
    (``run.video_every_evals``, needs ``render_mode="rgb_array"``) run on envs of the same
    factory (a VectorEnv's ``env_fns[0]``). The run records ``env.id: python:<name>``; its
    checkpoints evaluate from Python (``recur.evaluate(run, env=...)``), not with ``recur eval``.
    ``resume=`` with ``env=`` continues such a run, its episodes restarting.
    """
    if config is None and resume is None:
        raise ValueError("train needs a config file or resume=RUN_DIR")
    strings = override_strings(overrides, kwargs)
    source = None
    extra: dict[str, Any] = {}
    if env is not None:
        from .gym_batch import EnvSource

        source = EnvSource(env)
        pre = [f"env.id=python:{source.name}"]
        if source.num_envs is not None:
            pre.append(f"env.num_envs={source.num_envs}")
        strings = pre + strings
        extra = {
            "make_batch": source.make_batch,
            "video_fps": source.render_fps,
            "reward_threshold": source.reward_threshold,
        }
    result = _recur.train(
        os.fspath(config) if config is not None else "",
        strings,
        os.fspath(resume) if resume is not None else "",
        **extra,
    )
    return pathlib.Path(result["run_dir"])
