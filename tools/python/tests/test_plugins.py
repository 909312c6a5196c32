"""C++ env plugins from Python: recur.load_plugin, the plugin's envs through recur.make /
make_vec / gymnasium.make, training with env.plugin, and Policy.load / evaluate of such a run
finding the plugin again (tools/examples/tmaze, built by tools/test-python.sh)."""

import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import gymnasium as gym
import numpy as np
import pytest

import recur
from conftest import CONFIGS

PLUGIN = os.environ.get("RECUR_TMAZE_PLUGIN", "")
pytestmark = pytest.mark.skipif(
    not PLUGIN or not os.path.isfile(PLUGIN),
    reason="no T-maze plugin (set RECUR_TMAZE_PLUGIN; tools/test-python.sh builds it)",
)


def in_fresh_python(code):
    """Runs `code` in a new interpreter (no plugin loaded yet); returns its stdout."""
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, env=dict(os.environ), timeout=300)
    return r.returncode, r.stdout + r.stderr


def test_load_make_and_step():
    ids = recur.load_plugin(PLUGIN)
    assert ids == ["TMaze-v0", "TMazeLong-v0"]
    assert recur.load_plugin(PLUGIN) == ids  # the same file again: the first load
    loaded = [p for p in recur.loaded_plugins() if p["env_ids"] == ids]
    assert len(loaded) == 1 and loaded[0]["path"] == str(pathlib.Path(PLUGIN).resolve())
    assert "TMaze-v0" in recur.env_ids()

    env = recur.make("TMaze-v0")
    obs, _ = env.reset(seed=1)
    assert env.observation_space.contains(obs)
    steps, done = 0, False
    while not done:
        obs, reward, term, trunc, _ = env.step(env.action_space.sample())
        steps, done = steps + 1, term or trunc
    assert 1 <= steps <= 40

    envs = recur.make_vec("TMaze-v0", 4, seed=0)
    obs, _ = envs.reset()
    obs, rewards, *_ = envs.step(np.zeros(4, np.int64))
    assert obs.shape == (4, env.observation_space.shape[0]) and rewards.shape == (4,)
    assert gym.make("recur/TMaze-v0").reset(seed=0)[0].shape == obs.shape[1:]


def test_loader_errors_are_recur_errors(tmp_path):
    recur.load_plugin(PLUGIN)
    with pytest.raises(recur.Error, match="no such file"):
        recur.load_plugin(tmp_path / "libnothing.so")
    text = tmp_path / "notes.so"
    text.write_text("not a library")
    with pytest.raises(recur.Error, match="not an ELF shared library"):
        recur.load_plugin(text)
    # Another file with the same envs: every id clashes, nothing is registered.
    copy = tmp_path / "libtmaze_copy.so"
    shutil.copy(PLUGIN, copy)
    with pytest.raises(recur.Error, match="'TMaze-v0' is already registered by plugin"):
        recur.load_plugin(copy)
    # A plugin built against another recur: the version string it carries, patched.
    blob = pathlib.Path(PLUGIN).read_bytes()
    version = recur.__version__.encode() + b"\0"
    if blob.count(version) != 1:
        pytest.skip("the plugin's recur version string is not unique; cannot fake another")
    other = tmp_path / "libtmaze_other.so"
    other.write_bytes(blob.replace(version, b"9.9.9\0"))
    with pytest.raises(recur.Error, match=r"built against recur 9\.9\.9.*rebuild the plugin"):
        recur.load_plugin(other)


def test_train_on_plugin_env_then_evaluate_finds_it(tmp_path):
    plugin = tmp_path / "libtmaze_plugin.so"  # a copy this test may change
    shutil.copy(PLUGIN, plugin)
    # In a new process (this one has loaded PLUGIN, whose ids the copy would clash with).
    rc, out = in_fresh_python(f"""
        import recur
        run = recur.train({str(CONFIGS / "tmaze.yaml")!r}, {{"env.plugin": {str(plugin)!r},
            "run.output_dir": {str(tmp_path / "runs")!r}, "run.total_env_steps": 4096,
            "run.eval_every": 0, "run.final_eval_episodes": 4}})
        print("RUN=" + str(run))
    """)
    assert rc == 0, out
    run = pathlib.Path(out.split("RUN=", 1)[1].split()[0])
    assert "TMaze-v0" in (run / "config.yaml").read_text()
    # A new process: nothing loaded; the run's record names the plugin and its SHA-256.
    rc, out = in_fresh_python(f"""
        import recur
        r = recur.evaluate({str(run)!r}, episodes=6, deterministic=True)
        p = recur.Policy.load({str(run)!r})
        ids = [q["env_ids"] for q in recur.loaded_plugins()]
        print(r["env_id"], len(r["returns"]), p.env_id, ids)
    """)
    assert rc == 0, out
    assert "TMaze-v0 6 TMaze-v0 [['TMaze-v0', 'TMazeLong-v0']]" in out
    # The file changed: refused, naming both hashes; plugins=[...] loads a build anyway.
    with open(plugin, "ab") as f:
        f.write(b"x")
    rc, out = in_fresh_python(f"""
        import recur
        try:
            recur.evaluate({str(run)!r}, episodes=1)
        except recur.Error as e:
            print("refused:", e)
        r = recur.evaluate({str(run)!r}, episodes=2, plugins=[{PLUGIN!r}])
        print("override", r["env_id"], len(r["returns"]))
    """)
    assert rc == 0, out
    assert "refused:" in out and "has changed" in out and "plugins=[PATH]" in out
    assert "override TMaze-v0 2" in out
