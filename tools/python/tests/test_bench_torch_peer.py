"""tools/bench/bench_torch_peer.py (PyTorch's peer of `recur bench rnn-gpu` and `recur bench devices`):
its CPU smoke mode prints rows in recur's two table layouts, and it fails with a message, not a
traceback, where PyTorch or CUDA is missing. CI does not install PyTorch: the tests that run it
skip themselves then; the error paths are tested either way."""

import csv
import pathlib
import subprocess
import sys

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "bench" / "bench_torch_peer.py"
TINY = ["--batch", "1,3", "--hidden", "8", "--seq-len", "2", "--actor-hidden", "8",
        "--min-seconds", "0.003", "--threads", "1"]

# recur's column headers, as tools/cli/cmd_bench.cc formats them.
CORE_HEADER = (f"{'mode':<26} {'B':>5} {'H':>5} {'T':>5} {'us/call':>12} {'samples/s':>14} "
               f"{'GFLOP/s':>9} {'roofline':>9}  note")
ACTOR_COLUMNS = ["role", "device", "B", "H", "T", "us/call", "samples/s"]


def run(*args, python_prefix=()):
    return subprocess.run([sys.executable, *python_prefix, str(SCRIPT), *args],
                          capture_output=True, text=True, timeout=600)


def need_torch():
    return pytest.importorskip(
        "torch", reason="PyTorch is not installed (CI does not install it; see the header of "
        "tools/bench/bench_torch_peer.py)")


def test_cpu_smoke_rows_parse_and_are_positive():
    need_torch()
    r = run("--device", "cpu", *TINY)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("# torch ") and "TF32 off" in lines[0]
    assert CORE_HEADER in lines
    core, actor, table = [], [], None
    for line in lines[1:]:
        if line == CORE_HEADER:
            table = core
        elif line.split() == ACTOR_COLUMNS:
            table = actor
        elif line.strip() and table is not None and not line.startswith("policy:"):
            table.append(line.split())

    rows = {}
    for f in core:
        mode, B, H, T = f[0], int(f[1]), int(f[2]), int(f[3])
        us, per_s, gflops = float(f[4]), float(f[5]), float(f[6])
        # GFLOP/s and roofline may round to 0 on a slow machine at these tiny shapes.
        assert f[7].endswith("%") and float(f[7][:-1]) >= 0 and gflops >= 0, f
        assert us > 0 and per_s > 0, f
        # samples/s = B x T per call, as recur counts them (us/call is printed to 0.01).
        assert per_s == pytest.approx(B * T / (us * 1e-6), rel=0.02, abs=1), f
        rows[(mode, B, H, T)] = f
    want = {(m, B, 8, T) for B in (1, 3) for m, T in [("torch-gemm", 1), ("torch-step-eager", 1),
                                                      ("torch-seq-fwd", 2),
                                                      ("torch-seq-fwdbwd", 2),
                                                      ("torch-step-loop", 2)]}
    assert set(rows) == want
    assert [(f[0], f[1], int(f[2]), int(f[3]), int(f[4])) for f in actor] == [
        ("actor", "torch-eager", 1, 8, 1), ("actor", "torch-eager", 3, 8, 1)]
    assert all(float(f[5]) > 0 and float(f[6]) > 0 for f in actor)


def test_cpu_csv_has_recur_columns():
    need_torch()
    r = run("--device", "cpu", "--csv", "--modes", "torch-step-eager,torch-actor-eager", *TINY)
    assert r.returncode == 0, r.stderr
    blocks = [b.splitlines() for b in r.stdout.split("\n\n")]
    core, actor = blocks[0][1:], blocks[1]  # the first line of the first block is the header
    assert core[0] == ("mode,batch,hidden,seq_len,us_per_call,samples_per_s,gflops,"
                       "roofline_fraction,note")
    assert [c.split(",")[:4] for c in core[1:]] == [["torch-step-eager", "1", "8", "1"],
                                                    ["torch-step-eager", "3", "8", "1"]]
    assert actor[0] == "role,device,batch,hidden,seq_len,us_per_call,samples_per_s"
    assert [len(a.split(",")) for a in actor[1:]] == [7, 7]


def test_cuda_requested_without_cuda_fails_with_a_message():
    torch = need_torch()
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present: this tests the message for its absence")
    r = run("--device", "cuda", *TINY)
    assert r.returncode != 0
    assert "--device cuda requested" in r.stderr and "Traceback" not in r.stderr


def test_without_torch_fails_with_a_message():
    # `import torch` raises ImportError when sys.modules holds None for it.
    prefix = ["-c", "import runpy, sys; sys.modules['torch'] = None; sys.argv = sys.argv[1:]; "
              "runpy.run_path(sys.argv[0], run_name='__main__')"]
    r = run("--device", "cpu", *TINY, python_prefix=prefix)
    assert r.returncode == 2
    assert "PyTorch is not importable" in r.stderr and "Traceback" not in r.stderr


def test_graph_modes_are_refused_on_the_cpu():
    r = run("--device", "cpu", "--modes", "torch-step-graph")
    assert r.returncode == 2 and "not available on --device cpu" in r.stderr


def test_start_rate_adds_reset_correct_rows_checked_against_float64():
    # Each row ran only after its y, dx, dh0 and dc0 matched a float64 loop that zeroes the state
    # at the starts (a failed check exits 1 and names the row), so exit 0 is the parity check.
    need_torch()
    r = run("--device", "cpu", "--csv", "--batch", "3", "--hidden", "8", "--seq-len", "12",
            "--min-seconds", "0.003", "--threads", "1", "--start-rate", "0.2",
            "--modes", "torch-seq-fwd," + ",".join(
                f"torch-seq-{w}-{p}" for w in ("pad", "pack", "loop") for p in ("fwd", "fwdbwd")))
    assert r.returncode == 0, r.stderr
    rows = list(csv.reader(r.stdout.splitlines()[2:]))  # notes hold commas: quoted fields
    assert [f[0] for f in rows] == ["torch-seq-fwd"] + [
        f"torch-seq-{w}-{p}" for w in ("pad", "pack", "loop") for p in ("fwd", "fwdbwd")]
    assert rows[0][8].endswith("starts ignored")
    assert all(" starts" in f[8] and float(f[4]) > 0 for f in rows[1:])


def test_start_rate_zero_keeps_the_default_rows_and_bad_rates_are_refused():
    # Rate 0 (the default): the reset rows are not among the default modes, so the GPU session's
    # existing calls time what they did; a rate outside [0, 1] is refused before torch loads.
    r = run("--device", "cpu", "--start-rate", "1.5")
    assert r.returncode == 2 and "--start-rate must be within [0, 1], got 1.5" in r.stderr
    need_torch()
    r = run("--device", "cpu", "--csv", "--batch", "2", "--hidden", "8", "--seq-len", "3",
            "--min-seconds", "0.003", "--threads", "1", "--modes", "")
    assert r.returncode == 0, r.stderr
    assert "torch-seq-fwd," in r.stdout and "torch-seq-pad" not in r.stdout
