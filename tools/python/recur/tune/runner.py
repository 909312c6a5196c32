"""``recur train`` as a subprocess: the command lines of the dry runs and of a trial's runs, where
the recur executable is, a running run (TrialRun) and the rows it has written to its eval.csv."""

from __future__ import annotations

import dataclasses
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time
from typing import IO, Any

from .space import TuneError, yaml_value

# `recur train`'s exit status after Ctrl-C or SIGTERM: it finished the update and wrote a
# checkpoint (README, "Exit codes"). A trial whose run exits so was interrupted, not failed.
EXIT_TRAIN_INTERRUPTED = 130


@dataclasses.dataclass(frozen=True)
class Runner:
    recur: str  # the recur executable
    config: pathlib.Path
    fixed: tuple[str, ...]  # the user's --set overrides, as section.key=value
    plugins: tuple[str, ...]
    env_factory: str | None  # MODULE:CALLABLE: trials train a Python env through recur.train

    def overrides(self, values: dict[str, Any], pre: dict[str, Any] | None = None) -> list[str]:
        """section.key=value in the order recur applies them: the tuner's own keys (threads,
        seed, output), the user's fixed --set (so that they win), the sampled values."""
        out = [f"{k}={yaml_value(v)}" for k, v in (pre or {}).items()]
        out += self.fixed
        out += [f"{k}={yaml_value(v)}" for k, v in values.items()]
        return out

    def print_config(self, values: dict[str, Any]) -> subprocess.CompletedProcess:
        cmd = [self.recur, "--log-level", "error", "train", str(self.config)]
        for item in self.overrides(values):
            cmd += ["--set", item]
        for p in self.plugins:
            cmd += ["--plugin", p]
        return subprocess.run([*cmd, "--print-config"], capture_output=True, text=True)

    def train_command(self, values: dict[str, Any], pre: dict[str, Any] | None = None) -> list[str]:
        sets = self.overrides(values, pre)
        if self.env_factory:
            plugins = [f"env.plugin={yaml_value(list(self.plugins))}"] if self.plugins else []
            return [
                sys.executable,
                "-m",
                "recur.tune",
                "--_python-trial",
                str(self.config),
                self.env_factory,
                *plugins,
                *sets,
            ]
        cmd = [self.recur, "train", str(self.config)]
        for item in sets:
            cmd += ["--set", item]
        for p in self.plugins:
            cmd += ["--plugin", p]
        return cmd


def find_recur(explicit: str | None) -> str:
    """The recur executable: --recur, $RECUR_CLI, ./build/tools/recur, PATH. `recur tune` passes
    --recur (itself)."""
    candidates = [explicit, os.environ.get("RECUR_CLI"), os.path.join("build", "tools", "recur")]
    for c in candidates:
        if c and os.access(c, os.X_OK) and os.path.isfile(c):
            return os.path.abspath(c)
        if c and c == explicit:
            raise TuneError(f"--recur {explicit}: not an executable file")
    found = shutil.which("recur")
    if not found:
        raise TuneError(
            "no recur executable: build it (build/tools/recur), put it on PATH or pass --recur PATH"
        )
    return found


def read_eval_rows(run_root: pathlib.Path) -> list[float]:
    """return_mean of every complete row of the run's eval.csv (<output_dir>/<name>-<time>/)."""
    files = sorted(run_root.glob("*/eval.csv"))
    if not files:
        return []
    try:
        text = files[-1].read_text()
    except OSError:
        return []
    lines = text.split("\n")[:-1]  # the last piece is an incomplete line or empty
    if not lines:
        return []
    header = lines[0].split(",")
    col = header.index("return_mean") if "return_mean" in header else 1
    rows = []
    for line in lines[1:]:
        fields = line.split(",")
        try:
            rows.append(float(fields[col]))
        except (IndexError, ValueError):
            break
    return rows


@dataclasses.dataclass
class TrialRun:
    """One `recur train` of a trial: its tuning seed, its output directory (which holds its
    train.log) and the process."""

    seed: int
    out: pathlib.Path
    proc: subprocess.Popen
    log: IO[str]

    @classmethod
    def start(cls, seed: int, out: pathlib.Path, cmd: list[str]) -> TrialRun:
        log = open(out / "train.log", "w")
        return cls(seed, out, subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT), log)

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def running(self) -> bool:
        return self.proc.poll() is None

    def rows(self) -> list[float]:
        return read_eval_rows(self.out)

    def interrupt(self) -> bool:
        """SIGINT, as Ctrl-C: the run finishes its update, writes a checkpoint and exits
        EXIT_TRAIN_INTERRUPTED. False when it had already ended."""
        if not self.running():
            return False
        self.proc.send_signal(signal.SIGINT)
        return True

    def wait(self, deadline: float) -> None:
        """Waits for the run until `deadline` (time.monotonic()), then kills it; closes the log."""
        try:
            self.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()

    def interrupted(self) -> bool:
        """It stopped on a Ctrl-C or SIGTERM (the terminal's, or the driver's SIGINT)."""
        return self.proc.returncode == EXIT_TRAIN_INTERRUPTED

    def log_tail(self, lines: int = 3) -> list[str]:
        return (self.out / "train.log").read_text(errors="replace").strip().splitlines()[-lines:]
