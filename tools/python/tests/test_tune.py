"""`recur tune` (recur/tune/): a tiny study that prunes a hopeless trial and writes best.yaml, a
study killed mid-trial that resumes from its SQLite database, and bad input (exit 2)."""

import csv
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import CONFIGS

optuna = pytest.importorskip("optuna")

# Runs of a few seconds: CartPole-v1 (it learns within a few thousand steps), 8 evaluations.
TINY = [
    "--set",
    "run.total_env_steps=4096",
    "--set",
    "run.eval_every=512",
    "--set",
    "run.eval_episodes=3",
    "--set",
    "run.final_eval_episodes=5",
    "--set",
    "run.tensorboard=false",
]
SPACE = """\
algo: ppo
params:
  algo.learning_rate: {type: float, low: 1.0e-9, high: 3.0e-3, log: true}
  algo.epochs: {type: categorical, choices: [5, 10]}
"""


def tune_env():
    env = dict(os.environ)
    env["RECUR_PYTHON"] = sys.executable  # the `recur tune` command's interpreter
    return env


def tune_cmd(recur_cli, tmp_path, *extra, via_cli=False):
    space = tmp_path / "space.yaml"
    if not space.exists():
        space.write_text(SPACE)
    head = (
        [recur_cli, "tune"]
        if via_cli
        else [sys.executable, "-m", "recur.tune", "--recur", recur_cli]
    )
    return [
        *head,
        str(CONFIGS / "cartpole.yaml"),
        "--space",
        str(space),
        "--study-dir",
        str(tmp_path / "study"),
        "--no-enqueue-base",
        "--jobs",
        "1",
        "--sampler-seed",
        "3",
        *TINY,
        *extra,
    ]


def load_study(tmp_path, name="cartpole"):
    return optuna.load_study(
        study_name=name, storage=f"sqlite:///{tmp_path / 'study' / 'study.db'}"
    )


def test_tiny_study_prunes_and_writes_best(recur_cli, tmp_path):
    cmd = tune_cmd(
        recur_cli,
        tmp_path,
        "--n-trials",
        "3",
        "--pruner-startup-trials",
        "1",
        "--pruner-warmup-evals",
        "1",
        "--enqueue",
        "{algo.learning_rate: 2.0e-3, algo.epochs: 10}",
        "--enqueue",
        "{algo.learning_rate: 1.0e-9}",  # cannot learn: pruned against trial 0
        via_cli=True,
    )
    start = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True, env=tune_env(), timeout=300)
    print(f"tiny study: {time.monotonic() - start:.1f} s\n{r.stdout}\n{r.stderr}")
    assert r.returncode == 0, r.stderr
    study_dir = tmp_path / "study"
    with open(study_dir / "trials.csv") as f:
        rows = list(csv.DictReader(f))
    assert [row["number"] for row in rows] == ["0", "1", "2"]
    assert rows[0]["state"] == "COMPLETE"
    assert rows[1]["state"] == "PRUNED", rows[1]
    assert float(rows[1]["algo.learning_rate"]) == pytest.approx(1e-9)
    assert "PRUNED" in r.stdout and "best: trial" in r.stdout
    best = study_dir / "best.yaml"
    text = best.read_text()
    assert text.startswith("# recur tune: best trial")
    assert "tuning seeds [100, 101]" in text
    # best.yaml is a complete config that recur accepts as it is.
    p = subprocess.run(
        [recur_cli, "train", str(best), "--print-config"], capture_output=True, text=True
    )
    assert p.returncode == 0, p.stderr
    assert "total_env_steps: 4096" in p.stdout
    study = load_study(tmp_path)
    assert p.stdout.count("learning_rate: ") >= 1
    assert len(study.best_trial.user_attrs["seed_returns"]) == 2
    # Each trial trained once per tuning seed, in its own directory.
    assert sorted(d.name for d in (study_dir / "trials" / "trial-0000").iterdir()) == [
        "seed-100",
        "seed-101",
    ]
    complete = [t for t in study.trials if t.state.name == "COMPLETE"]
    assert (study_dir / "importance.txt").exists() == (len(complete) >= 2)


def test_killed_study_resumes_without_losing_or_repeating_trials(recur_cli, tmp_path):
    # Trials of 32k steps (a few seconds each, evaluated every 8k): the kill must land while trial
    # 1 runs, and a 4096-step trial can finish in under half a second on a fast machine.
    cmd = tune_cmd(
        recur_cli,
        tmp_path,
        "--n-trials",
        "3",
        "--pruner",
        "none",
        "--set",
        "run.total_env_steps=32768",
        "--set",
        "run.eval_every=8192",
    )
    log = tmp_path / "first.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while "trial 0 value" not in log.read_text():
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        # Kill as soon as the study records trial 1 as running (not after a guessed delay).
        while True:
            trials = load_study(tmp_path).trials
            if len(trials) > 1 and trials[1].state.name == "RUNNING":
                break
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the driver and its recur train runs, as a crash
        proc.wait()
    before = {t.number: (t.state.name, t.value, t.params) for t in load_study(tmp_path).trials}
    assert before[0][0] == "COMPLETE"
    assert before[1][0] == "RUNNING"

    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    print(r.stdout, r.stderr)
    assert r.returncode == 0, r.stderr
    assert "trial 1 was left running by an interrupted study" in r.stdout
    trials = load_study(tmp_path).trials
    after = {t.number: (t.state.name, t.value, t.params) for t in trials}
    assert after[0] == before[0]  # kept as it was, not run again
    assert after[1][0] == "FAIL" and trials[1].user_attrs["interrupted"]
    finished = [t for t in trials if t.state.name in ("COMPLETE", "PRUNED")]
    assert len(finished) == 3
    retries = [t for t in trials if t.user_attrs.get("retry_of") == 1]
    assert len(retries) == 1 and retries[0].params == before[1][2]
    assert retries[0].state.name == "COMPLETE"
    # A third run finds the study done and trains nothing.
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0
    assert "3 of 3 trials finished" in r.stdout
    assert len(load_study(tmp_path).trials) == len(trials)


BAD_SPACES = [
    (
        "algo.learnin_rate: {type: float, low: 1.0e-5, high: 1.0e-3}",
        "entry 'algo.learnin_rate': unknown config key (did you mean algo.learning_rate?)",
    ),
    (
        "algo.learning_rate: {type: float, low: 1.0e-3, high: 1.0e-5}",
        "entry 'algo.learning_rate': the range is empty: low 0.001 > high 1e-05",
    ),
    (
        "algo.epochs: {type: int, low: 1.5, high: 10}",
        "entry 'algo.epochs': low must be an integer, got 1.5",
    ),
    (
        "algo.learning_rate: {type: float, low: small, high: 1.0e-3}",
        "entry 'algo.learning_rate': low must be a finite number, got 'small'",
    ),
    (
        "algo.epochs: {type: categorical, choices: []}",
        "entry 'algo.epochs': choices must be a non-empty list",
    ),
    (
        "algo.gamma: {type: floaty, low: 0.9, high: 0.99}",
        "entry 'algo.gamma': expected a mapping with type",
    ),
    (
        "algo.gamma: {type: float, low: 0.9, high: 1.5}",
        "entry 'algo.gamma': recur refuses algo.gamma=1.5",
    ),
    ("algo.ent_coef: {type: float, low: 0.0, high: 0.1, log: true}", "log: true needs low > 0"),
]


@pytest.mark.parametrize(
    "entry,message",
    BAD_SPACES,
    ids=[m.split(":")[0] + str(i) for i, (_, m) in enumerate(BAD_SPACES)],
)
def test_bad_search_space_exits_2(recur_cli, tmp_path, entry, message):
    space = tmp_path / "space.yaml"
    space.write_text("params:\n  " + entry + "\n")
    r = subprocess.run(
        tune_cmd(recur_cli, tmp_path, "--n-trials", "1"), capture_output=True, text=True
    )
    assert r.returncode == 2, r.stderr
    assert f"recur tune: error: search space {space}: " in r.stderr
    assert message in r.stderr
    assert not (tmp_path / "study").exists()  # nothing written


def test_unwritable_storage_exits_2(recur_cli, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    url = f"sqlite:///{blocker}/sub/study.db"
    r = subprocess.run(
        tune_cmd(recur_cli, tmp_path, "--storage", url), capture_output=True, text=True
    )
    assert r.returncode == 2
    assert (
        f"recur tune: error: --storage {url}: directory {blocker}/sub cannot be created" in r.stderr
    )


def test_overlapping_accept_seeds_exit_2(recur_cli, tmp_path):
    r = subprocess.run(
        tune_cmd(recur_cli, tmp_path, "--seeds", "0,1", "--accept-seeds", "1,2"),
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2
    assert "--accept-seeds [1] are also tuning seeds" in r.stderr


def test_cli_runs_the_source_tree_tuner_without_the_package(recur_cli, tmp_path):
    # An interpreter with Optuna but no recur package (a plain build tree): the tuner runs from
    # tools/python/recur/tune/ without importing the recur package.
    env = tune_env()
    env.pop("PYTHONPATH", None)
    env["RECUR_PYTHON"] = sys.executable
    probe = subprocess.run([sys.executable, "-c", "import recur"], capture_output=True, env=env)
    assert probe.returncode != 0  # really without the package
    r = subprocess.run([recur_cli, "tune", "--help"], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and "usage: recur tune" in r.stdout, r.stderr


def test_cli_without_python_exits_2(recur_cli, tmp_path):
    env = tune_env()
    env["RECUR_PYTHON"] = str(tmp_path / "no-python")
    r = subprocess.run([recur_cli, "tune", "x.yaml"], capture_output=True, text=True, env=env)
    assert r.returncode == 2
    assert "cannot import optuna and yaml" in r.stderr and "pip install optuna" in r.stderr
    r = subprocess.run(
        [recur_cli, "tune", "--help"], capture_output=True, text=True, env=tune_env()
    )
    assert r.returncode == 0 and "usage: recur tune" in r.stdout


# Every shipped search space and the config it was written for: each must pass the tuner's own
# checks (known keys, non-empty ranges, every edge and choice accepted by recur). A new space file
# must be added here.
SHIPPED_SPACES = {
    "ppo_lstm.yaml": "cartpole_novel.yaml",
    "cartpole_novel_narrow.yaml": "cartpole_novel.yaml",
    "acrobot_narrow.yaml": "acrobot.yaml",
    "lunar_lander_novel_narrow.yaml": "lunar_lander_novel.yaml",
    "bipedal_walker_final.yaml": "bipedal_walker.yaml",
    "sac_lstm.yaml": "pendulum_novel_sac.yaml",
    "td3_lstm.yaml": "pendulum_novel_td3.yaml",
}


def test_every_shipped_space_is_listed():
    assert sorted(p.name for p in (CONFIGS / "tune").glob("*.yaml")) == sorted(SHIPPED_SPACES)


@pytest.mark.parametrize("space,config", sorted(SHIPPED_SPACES.items()))
def test_shipped_space_passes_check(recur_cli, tmp_path, space, config):
    study = tmp_path / "study"
    cmd = [
        sys.executable,
        "-m",
        "recur.tune",
        "--recur",
        recur_cli,
        str(CONFIGS / config),
        "--space",
        str(CONFIGS / "tune" / space),
        "--study-dir",
        str(study),
        "--check",
    ]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "every edge accepted" in r.stdout
    assert not study.exists()  # --check writes nothing


def test_check_reports_a_bad_space(recur_cli, tmp_path):
    space = tmp_path / "space.yaml"
    space.write_text("params:\n  algo.gamma: {type: float, low: 0.9, high: 1.5}\n")
    r = subprocess.run(tune_cmd(recur_cli, tmp_path, "--check"), capture_output=True, text=True)
    assert r.returncode == 2
    assert "algo.gamma" in r.stderr


def test_minibatch_fix_counts_bptt_sequences():
    from recur.tune.space import minibatch_fix

    base = {"env.num_envs": 8, "algo.rollout_steps": 32}
    # Whole env sequences: 8 of them, so 3 becomes 2 and 16 becomes 8.
    assert minibatch_fix({"algo.num_minibatches": 3}, base)["algo.num_minibatches"] == 2
    assert minibatch_fix({"algo.num_minibatches": 16}, base)["algo.num_minibatches"] == 8
    # algo.bptt_steps 8 cuts each rollout into 4: 32 sequences, so 16 stands and 12 becomes 8.
    cut = {"algo.num_minibatches": 16, "algo.bptt_steps": 8}
    assert minibatch_fix(cut, base)["algo.num_minibatches"] == 16
    cut = {"algo.num_minibatches": 12, "algo.bptt_steps": 8}
    assert minibatch_fix(cut, base)["algo.num_minibatches"] == 8
    # A bptt_steps recur will refuse (not a divisor) leaves the env count, for recur to report.
    odd = {"algo.num_minibatches": 16, "algo.bptt_steps": 5}
    assert minibatch_fix(odd, base)["algo.num_minibatches"] == 8
