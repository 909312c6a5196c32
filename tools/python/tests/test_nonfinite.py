"""NaN and infinity: a checkpoint holding one is refused on load, naming the tensor and element
(it used to load, act as garbage and exit 0); a Python env returning one stops training, naming
the env and the step."""

import json
import shutil
import struct
import subprocess

import gymnasium
import numpy as np
import pytest

import recur
from conftest import CONFIGS


def poison(src, dst, tensor, index, value):
    """Copies the safetensors file src to dst with element `index` of `tensor` set to `value`."""
    raw = bytearray(src.read_bytes())
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    begin = 8 + n + header[tensor]["data_offsets"][0] + 4 * index
    raw[begin : begin + 4] = struct.pack("<f", value)
    dst.write_bytes(bytes(raw))


@pytest.mark.parametrize("value, shown", [(float("nan"), "nan"), (float("-inf"), "-inf")])
def test_policy_load_refuses_nonfinite_weights(cartpole_run, tmp_path, value, shown):
    good = cartpole_run / "checkpoints" / "latest.safetensors"
    bad = tmp_path / "poisoned.safetensors"
    poison(good, bad, "actor.weight", 3, value)
    with pytest.raises(recur.Error) as e:
        recur.Policy.load(bad)
    msg = str(e.value)
    assert str(bad) in msg
    assert f'tensor "actor.weight" holds a non-finite value ({shown}) at index 3 = [0, 3]' in msg
    recur.Policy.load(good)  # the original is fine


def test_cli_eval_and_convert_refuse_nonfinite_weights(cartpole_run, tmp_path, recur_cli):
    run = tmp_path / "run"
    shutil.copytree(cartpole_run, run)
    latest = run / "checkpoints" / "latest.safetensors"
    poison(cartpole_run / "checkpoints" / "latest.safetensors", latest, "actor.weight", 0,
           float("nan"))
    for args in (["eval", str(latest), "--episodes", "2"],
                 ["convert", "export", str(latest), "--to", "onnx", "--out",
                  str(tmp_path / "p.onnx")]):
        out = subprocess.run([recur_cli, *args], capture_output=True, text=True)
        assert out.returncode == 2, (args, out.stdout, out.stderr)
        assert 'tensor "actor.weight" holds a non-finite value (nan) at index 0' in out.stderr
    assert not (tmp_path / "p.onnx").exists()
    # The policy still acts on finite inputs from a good checkpoint.
    policy = recur.Policy.load(cartpole_run)
    actions, _ = policy.act(np.zeros((1, policy.obs_dim), np.float32), policy.initial_state(1))
    assert actions.shape[0] == 1


class NanAfter(gymnasium.Env):
    """CartPole-like toy whose 43rd step returns a NaN observation (a buggy Python env)."""

    observation_space = gymnasium.spaces.Box(-1.0, 1.0, (3,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)

    def __init__(self):
        self.steps = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(3, np.float32), {}

    def step(self, action):
        self.steps += 1
        obs = np.full(3, 0.5, np.float32)
        if self.steps == 43:
            obs[2] = np.nan
        return obs, 1.0, self.steps % 10 == 0, False, {}


def test_python_env_nan_observation_names_env_and_step(runs_dir):
    with pytest.raises(recur.Error) as e:
        recur.train(
            CONFIGS / "cartpole.yaml",
            {"run.output_dir": str(runs_dir / "nan_env"), "env.num_envs": 2},
            env=NanAfter,
            run__total_env_steps=512,
        )
    msg = str(e.value)
    assert "(index 0 of a batch of 2) returned a non-finite observation (observation[2] = nan)" in msg
    assert "at env step 86 of the run" in msg
