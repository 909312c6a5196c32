"""tools/plot_run.py: one run's curves, with the confirmations of confirm.csv."""

import subprocess
import sys

from PIL import Image

from conftest import REPO, load_script

SCRIPT = REPO / "tools" / "plot_run.py"


def fake_run(root):
    run = root / "lunar_lander_gpu_fast-20261201-051256"
    run.mkdir()
    (run / "progress.csv").write_text(
        "env_steps,return_mean,return_min,return_max\n1000,-100,-200,0\n2000,150,0,250\n3000,210,100,280\n"
    )
    (run / "eval.csv").write_text(
        "env_steps,return_mean,return_std,length_mean,episodes\n"
        "1000,-90,10,300,10\n2000,205,30,400,10\n3000,230,20,380,10\n"
    )
    (run / "confirm.csv").write_text(
        "env_steps,eval_return_mean,return_mean,return_std,length_mean,episodes,confirmed\n"
        "2000,205,180.5,60,420,100,0\n3000,230,221.25,40,390,100,1\n"
    )
    return run


def test_confirmations_split_by_the_confirmed_column(tmp_path):
    m = load_script(SCRIPT)
    held, short = m.confirmations(m.read_columns(fake_run(tmp_path) / "confirm.csv"))
    assert held == [(3000.0, 221.25)]
    assert short == [(2000.0, 180.5)]
    # A run without the file (confirmation off) has none.
    assert m.confirmations(m.read_columns(tmp_path / "absent.csv")) == ([], [])


def test_writes_a_png_with_the_confirmations(tmp_path):
    run = fake_run(tmp_path)
    out = tmp_path / "curves.png"
    subprocess.run([sys.executable, str(SCRIPT), str(run), "--out", str(out)], check=True)
    with Image.open(out) as image:
        assert image.size[0] > 100 and image.size[1] > 100
