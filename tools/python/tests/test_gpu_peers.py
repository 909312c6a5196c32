"""tools/bench/peers/cleanrl_lstm_ppo.py (the CleanRL-style LSTM-PPO set beside recur on the GPU,
tools/gpu/README.md "Peers"): a few hundred CPU steps end to end, its RESULT line parsed, both env
layouts (in-process and worker processes). CI does not install PyTorch: these skip then."""

import json
import pathlib
import subprocess
import sys

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "bench" / "peers" / "cleanrl_lstm_ppo.py"
TINY = ["--preset", "cpu", "--env", "CartPole-v1", "--device", "cpu", "--threads", "1",
        "--num-envs", "4", "--rollout", "8", "--minibatches", "2", "--epochs", "1",
        "--hidden", "8", "--encoder", "8", "--total-steps", "256", "--target-window", "2"]


def run(*args):
    pytest.importorskip("torch", reason="PyTorch is not installed (CI does not install it)")
    pytest.importorskip("gymnasium")
    r = subprocess.run([sys.executable, str(SCRIPT), *TINY, *args], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    last = r.stdout.strip().splitlines()[-1]
    assert last.startswith("RESULT "), r.stdout
    return json.loads(last[len("RESULT "):])


@pytest.mark.parametrize("workers", [0, 2])
def test_cleanrl_peer_runs_and_reports(workers):
    result = run("--env-workers", str(workers), "--no-shared-core", "--head", "8")
    assert result["env_steps"] == 256 and result["updates"] == 8
    assert result["env_steps_per_s"] > 0 and result["learn_s"] > 0
    assert result["shared_core"] is False and result["head"] == [8]
    assert result["episodes"] > 0  # CartPole's random episodes end within 256 steps of 4 envs
    assert result["target"] == 475.0


def test_cleanrl_peer_rejects_an_uneven_minibatch_split():
    pytest.importorskip("gymnasium")
    r = subprocess.run([sys.executable, str(SCRIPT), *TINY, "--num-envs", "5"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "divisible by --minibatches" in r.stderr
