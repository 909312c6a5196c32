"""`recur tune` installed (`cmake --install`) and run from a directory outside the repository: the
tuner and the default search space come from <prefix>/share/recur/, found from the executable,
with an interpreter that has Optuna but no recur package."""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from conftest import CONFIGS

pytest.importorskip("optuna")

# A trial of a few seconds with the default space (ppo_lstm.yaml): the rollout length fixed, as
# its largest value needs num_envs x 4096 env steps.
SHORT = [
    "--set",
    "algo.rollout_steps=32",
    "--set",
    "run.total_env_steps=2048",
    "--set",
    "run.eval_every=1024",
    "--set",
    "run.eval_episodes=2",
    "--set",
    "run.final_eval_episodes=2",
    "--set",
    "run.tensorboard=false",
]


@pytest.fixture(scope="module")
def installed(recur_cli, tmp_path_factory):
    build = pathlib.Path(recur_cli).resolve().parents[1]
    if not (build / "CMakeCache.txt").is_file() or shutil.which("cmake") is None:
        pytest.skip(f"{recur_cli} is not in a CMake build tree")
    prefix = tmp_path_factory.mktemp("prefix")
    r = subprocess.run(
        ["cmake", "--install", str(build), "--prefix", str(prefix)], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return prefix


def user_env():
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # no recur package: the installed tuner runs
    env.pop("RECUR_CLI", None)
    env.pop("RECUR_TUNE_SPACES", None)
    env["RECUR_PYTHON"] = sys.executable
    return env


def test_install_puts_the_tuner_and_the_spaces_in_share(installed):
    share = installed / "share" / "recur"
    assert (share / "python" / "recur" / "tune" / "__main__.py").is_file()
    assert (share / "python" / "recur" / "overrides.py").is_file()
    spaces = sorted(p.name for p in (share / "tune").glob("*.yaml"))
    assert spaces == sorted(p.name for p in (CONFIGS / "tune").glob("*.yaml"))


def test_installed_tune_runs_from_any_directory(installed, tmp_path):
    shutil.copy(CONFIGS / "cartpole_novel.yaml", tmp_path)
    recur = str(installed / "bin" / "recur")
    r = subprocess.run(
        [recur, "tune", "cartpole_novel.yaml", "--check"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=user_env(),
    )
    assert r.returncode == 0, r.stderr
    default_space = installed / "share" / "recur" / "tune" / "ppo_lstm.yaml"
    assert f"recur tune: {default_space}: " in r.stdout and "every edge accepted" in r.stdout
    cmd = [recur, "tune", "cartpole_novel.yaml", "--n-trials", "1", "--seeds", "100"]
    cmd += ["--jobs", "1", "--pruner", "none", "--sampler-seed", "0", *SHORT]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=user_env())
    assert r.returncode == 0, r.stdout + r.stderr
    study = tmp_path / "tune" / "cartpole_novel"
    assert (study / "best.yaml").is_file() and (study / "trials.csv").is_file()
    assert "trial 0 value" in r.stdout
