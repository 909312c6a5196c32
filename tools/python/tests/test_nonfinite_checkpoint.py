"""A checkpoint holding a NaN or an infinity is refused on load, naming the tensor and element
(issue: it used to load, act as garbage and exit 0)."""

import json
import shutil
import struct
import subprocess

import numpy as np
import pytest

import recur


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
