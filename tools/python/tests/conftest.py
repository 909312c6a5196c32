"""Shared fixtures: the repository root, short training runs (one per action kind), the CLI."""

import importlib.util
import os
import pathlib
import shutil

import pytest

import recur

REPO = pathlib.Path(__file__).resolve().parents[3]
CONFIGS = REPO / "configs"

recur.set_log_level("warn")


def load_script(path: pathlib.Path):
    """A tools/ script imported as a module (they are scripts, not a package), to test its parts."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def runs_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("runs")


@pytest.fixture(scope="session")
def cartpole_run(runs_dir):
    """CartPoleNoVel-v1, LSTM with a separate critic core, 512 env steps (a discrete policy)."""
    return recur.train(
        CONFIGS / "cartpole_novel.yaml",
        {"run.output_dir": str(runs_dir)},
        run__total_env_steps=512,
        run__eval_every=0,
        run__final_eval_episodes=4,
    )


@pytest.fixture(scope="session")
def pendulum_run(runs_dir):
    """PendulumNoVel-v1, encoder + shared LSTM, 512 env steps (a continuous policy)."""
    return recur.train(
        CONFIGS / "pendulum_novel.yaml",
        {"run.output_dir": str(runs_dir), "env.num_envs": 4, "algo.rollout_steps": 64},
        run__total_env_steps=512,
        run__eval_every=0,
        run__final_eval_episodes=2,
    )


@pytest.fixture(scope="session")
def recur_cli():
    """The `recur` executable: $RECUR_CLI, else build/tools/recur, else the one on PATH."""
    for candidate in (os.environ.get("RECUR_CLI"), str(REPO / "build" / "tools" / "recur")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("recur")
    if not found:
        pytest.skip("no recur executable (build it, or set RECUR_CLI)")
    return found
