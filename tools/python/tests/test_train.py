"""recur.train: run directories, overrides in their three spellings, errors, resume."""

import csv
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import recur
from conftest import CONFIGS
from recur.training import override_strings


def config_value(run, section, key):
    """A value of the run's resolved config.yaml (sections of 'key: value' lines)."""
    current = None
    for line in (run / "config.yaml").read_text().splitlines():
        if line and not line.startswith(" ") and line.endswith(":"):
            current = line[:-1]
        elif current == section and line.strip().startswith(key + ":"):
            return line.split(":", 1)[1].strip()
    raise KeyError(f"{section}.{key}")


def progress_rows(run):
    with open(run / "progress.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_override_spellings():
    assert override_strings(
        {"algo.learning_rate": 3e-4, "env.normalize_obs": False},
        {"policy__encoder": [64, 64], "run__name": "x"},
    ) == [
        "algo.learning_rate=0.0003",
        "env.normalize_obs=false",
        "policy.encoder=[64, 64]",
        "run.name=x",
    ]
    assert override_strings(["algo.gamma=0.9"], {}) == ["algo.gamma=0.9"]
    with pytest.raises(ValueError, match="section.key=value"):
        override_strings(["algo.gamma"], {})


def test_train_returns_run_dir_with_progress(tmp_path):
    run = recur.train(
        CONFIGS / "cartpole.yaml",
        {"run.output_dir": str(tmp_path), "algo.learning_rate": 3e-4},
        run__total_env_steps=512,
        run__eval_every=0,
        run__final_eval_episodes=2,
        run__name="py",
    )
    assert run.parent == tmp_path and run.name.startswith("py-")
    rows = progress_rows(run)
    assert rows and int(rows[-1]["env_steps"]) >= 512
    assert float(config_value(run, "algo", "learning_rate")) == pytest.approx(3e-4)
    assert (run / "checkpoints" / "latest.safetensors").exists()


def test_resume_continues_the_run(tmp_path):
    run = recur.train(
        CONFIGS / "cartpole.yaml",
        [f"run.output_dir={tmp_path}", "run.total_env_steps=512", "run.eval_every=0",
         "run.final_eval_episodes=2"],
    )
    before = len(progress_rows(run))
    again = recur.train(resume=run, run__total_env_steps=1024)
    assert again == run
    rows = progress_rows(run)
    assert len(rows) > before and int(rows[-1]["env_steps"]) >= 1024


def test_bad_config_raises_recur_error(tmp_path):
    with pytest.raises(recur.Error, match="learning_rat"):
        recur.train(CONFIGS / "cartpole.yaml", algo__learning_rat=0.1)
    with pytest.raises(recur.Error, match="does not exist"):
        recur.train(tmp_path / "missing.yaml")
    with pytest.raises(ValueError, match="config file or resume"):
        recur.train()


def test_ctrl_c_writes_a_checkpoint_and_raises(tmp_path):
    """SIGINT during recur.train: the update finishes, a checkpoint is written, and
    KeyboardInterrupt names the run directory (as `recur train` does on Ctrl-C)."""
    script = textwrap.dedent(f"""
        import signal, recur
        signal.signal(signal.SIGINT, signal.default_int_handler)  # ignored in background jobs
        recur.set_log_level("off")
        try:
            recur.train({str(CONFIGS / "cartpole.yaml")!r}, run__output_dir={str(tmp_path)!r},
                        run__total_env_steps=100_000_000, run__eval_every=0)
        except KeyboardInterrupt as e:
            print("interrupted:", e)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # until the first progress row is written
        rows = list(tmp_path.glob("*/progress.csv"))
        if rows and len(rows[0].read_text().splitlines()) > 1:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert "interrupted: training interrupted after" in out
    (run,) = tmp_path.iterdir()
    assert str(run) in out
    assert (run / "checkpoints" / "latest.safetensors").exists()


@pytest.mark.parametrize("config", ["pendulum_novel_sac.yaml", "cartpole_novel_sac.yaml"])
def test_recurrent_sac_trains_and_its_policy_loads(tmp_path, config):
    """algo.type sac through recur.train; the checkpoint acts through recur.Policy (the squashed
    actor's deterministic actions stay inside the Box)."""
    run = recur.train(
        CONFIGS / config,
        {"run.output_dir": str(tmp_path), "env.num_envs": 2, "policy.hidden": 8},
        offpolicy__learning_starts=200,
        offpolicy__batch_size=4,
        offpolicy__seq_len=8,
        offpolicy__steps_per_iteration=200,
        run__total_env_steps=600,
        run__eval_every=400,
        run__eval_episodes=1,
        run__final_eval_episodes=1,
    )
    rows = progress_rows(run)
    assert int(rows[-1]["env_steps"]) == 600 and int(rows[-1]["n_updates"]) > 0
    policy = recur.Policy.load(run / "checkpoints" / "latest.safetensors")
    obs = np.zeros((3, policy.obs_dim), np.float32)
    actions, _ = policy.act(obs, policy.initial_state(3), deterministic=True)
    if policy.discrete:
        assert actions.shape == (3,)
    else:
        assert policy.spec["policy.squash"] == "tanh_gaussian"
        assert actions.shape == (3, 1) and np.all(np.abs(actions) <= 2.0)
