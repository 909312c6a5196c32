"""tools/plot_runs.py: mean and min..max over seeds per group, one PNG (issue 25's curves)."""

import subprocess
import sys

import pytest
from PIL import Image

from conftest import REPO, load_script

SCRIPT = REPO / "tools" / "plot_runs.py"


def load():
    return load_script(SCRIPT)


def fake_run(root, name, returns, steps=(1000, 2000, 3000)):
    run = root / name
    run.mkdir()
    rows = ["env_steps,return_mean,return_std,length_mean,episodes"]
    rows += [f"{s},{r},1.0,10,10" for s, r in zip(steps, returns)]
    (run / "eval.csv").write_text("\n".join(rows) + "\n")
    (run / "progress.csv").write_text(
        "env_steps,return_mean\n" + "".join(f"{s},{r}\n" for s, r in zip(steps, returns))
    )
    return run


def test_spread_is_mean_min_max_over_common_steps():
    m = load()
    steps, mean, low, high = m.spread(
        [[(1, 0.0), (2, 10.0), (3, 30.0)], [(1, 2.0), (2, 20.0)], [(1, 4.0), (2, 0.0), (4, 9.0)]]
    )
    assert steps == [1, 2]  # 3 and 4 are not in every seed's curve
    assert mean == [2.0, 10.0] and low == [0.0, 0.0] and high == [4.0, 20.0]


def test_groups_by_config_name_and_writes_a_png(tmp_path):
    runs = [
        fake_run(tmp_path, "cartpole_novel-20261125-101010", [10, 200, 500]),
        fake_run(tmp_path, "cartpole_novel-20261125-101011", [20, 300, 480]),
        fake_run(tmp_path, "acrobot-20261125-101012", [-500, -200, -90]),
    ]
    m = load()
    import argparse

    groups = m.parse_groups(
        argparse.Namespace(runs=[str(r) for r in runs], group=[]), argparse.ArgumentParser()
    )
    assert sorted(groups) == ["acrobot", "cartpole_novel"] and len(groups["cartpole_novel"]) == 2
    out = tmp_path / "curves.png"
    r = subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, runs[:2]), "--group",
         f"new={runs[2]}", "--target", "475", "--train", "--out", str(out)],
        capture_output=True, text=True,
    )
    assert r.returncode == 0, r.stderr
    with Image.open(out) as img:
        assert img.format == "PNG" and img.size[0] > img.size[1] > 100


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "no runs"),
        (["--group", "nolabel"], "expected LABEL=RUN_DIR"),
        (["{empty}"], "has no eval.csv"),
    ],
)
def test_bad_input_exits_2(tmp_path, args, message):
    (tmp_path / "empty").mkdir()
    args = [a.replace("{empty}", str(tmp_path / "empty")) for a in args]
    r = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)
    assert r.returncode == 2 and message in r.stderr


def test_seeds_draws_every_run_whole(tmp_path):
    """--seeds: one thin line per run, each as long as its own eval.csv (a run stopped at its
    target ends early; the mean covers only the steps every seed reached)."""
    runs = [
        fake_run(tmp_path, "a-20261128-101010", [10, 200, 500]),
        fake_run(tmp_path, "a-20261128-101011", [20, 480], steps=(1000, 2000)),
    ]
    m = load()
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    m.draw(ax, {"a": [str(r) for r in runs]}, "eval.csv", "return_mean", "t", None, seeds=True)
    lengths = sorted(len(line.get_xdata()) for line in ax.get_lines())
    assert lengths == [2, 2, 3]  # the mean over the common steps, then each seed whole
    fig.clf()
    fig, ax = plt.subplots()
    m.draw(ax, {"a": [str(r) for r in runs]}, "eval.csv", "return_mean", "t", None)
    assert len(ax.get_lines()) == 1
