"""tools/popgym_mmer.py: POPGym's MMER of recur runs, per iteration or smoothed as RLlib reports."""

import csv
import subprocess
import sys

from conftest import REPO, load_script

SCRIPT = REPO / "tools" / "popgym_mmer.py"


def load():
    return load_script(SCRIPT)


# Six episodes finish over four iterations of 50 env steps; the second iteration's two episodes
# (0.9, 0.7) give the best per-iteration mean, which a 3-episode window dilutes.
RETURNS = [-0.5, 0.9, 0.7, -0.1, 0.2, 0.4]
PROGRESS = [  # env_steps, cumulative episodes, that iteration's return_mean
    (50, 1, -0.5),
    (100, 3, 0.8),
    (150, 4, -0.1),
    (200, 6, 0.3),
]


def fake_run(root, name, returns=RETURNS, progress=PROGRESS):
    run = root / name
    run.mkdir()
    (run / "config.yaml").write_text("env:\n  id: RepeatFirstMedium-v0\n  num_envs: 2\n")
    lines = ["env_steps,time_s,fps,episodes,return_mean"]
    lines += [f"{s},{s / 100},100,{e},{r}" for s, e, r in progress]
    (run / "progress.csv").write_text("\n".join(lines) + "\n")
    monitor = ['#{"t_start": 0, "env_id": "RepeatFirstMedium-v0"}', "r,l,t"]
    monitor += [f"{r},10,{i}" for i, r in enumerate(returns)]
    (run / "monitor.csv").write_text("\n".join(monitor) + "\n")
    return run


def test_per_iteration_and_smoothed(tmp_path):
    m = load()
    run = fake_run(tmp_path, "a")
    with open(run / "progress.csv") as f:
        rows = list(csv.DictReader(f))
    returns = m.episode_returns(run)
    assert returns == RETURNS
    assert m.mmer(rows, returns, 0, 1) == 0.8
    # Looks at 100 (episodes 1-3) and 200 (4-6): means 0.3667 and 0.1667.
    assert abs(m.mmer(rows, returns, 3, 100) - (1.1 / 3)) < 1e-12
    # A look every row with a 2-episode window: -0.5, then 0.8 at 100 (0.9, 0.7), then 0.3, 0.3.
    assert abs(m.mmer(rows, returns, 2, 50) - 0.8) < 1e-12
    # Fewer finished than the window at the first look: the mean of what there is (-0.5).
    assert m.mmer(rows[:1], returns[:1], 100, 50) == -0.5


def test_cli_table_over_seeds(tmp_path):
    fake_run(tmp_path, "s0")
    fake_run(tmp_path, "s1", returns=[-0.5, 0.9, 0.7, -0.1, 0.8, 0.8])
    paper = tmp_path / "gru.csv"
    paper.write_text("env_id,gru_mmer\nRepeatFirstMedium-v0,1.000\n")
    out = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path / "s0"), str(tmp_path / "s1"),
         "--paper", str(paper), "--smooth", "3", "--every", "100"],
        capture_output=True, text=True, check=True,
    ).stdout
    # Seed 0: 0.367; seed 1: max(0.367, 0.5) = 0.5; mean 0.433, sd 0.094.
    assert "| RepeatFirstMedium-v0 | 2 | 0.433 ± 0.094 | 1.000 | 200 |" in out, out
    bad = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path / "s0"), "--every", "0"],
        capture_output=True, text=True,
    )
    assert bad.returncode != 0 and "--every 0" in bad.stderr
